import type { Knex } from 'knex';
import { camelCased } from '../db/row-fields.js';
import { knexOf, type StoreTransaction } from '../db/store-transaction.js';
import type { OwnerLocks, OwnerNames } from './owner-ports.js';

export interface UserRecord {
  id: number;
  username: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  isAdmin: boolean;
  enabled: boolean;
  /** Whether a score token was issued (only its SHA-256 is stored; the token itself was shown once). */
  hasScoreToken: boolean;
  /** Whether a callback signing secret was issued (stored sealed; shown once, when issued). */
  hasCallbackSecret: boolean;
  createdAt: Date;
}

interface UserRow {
  id: number;
  username: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  is_admin: number | boolean;
  enabled: number | boolean;
  score_token_hash: Buffer | null;
  callback_secret_sealed: Buffer | null;
  created_at: Date;
}

function toUser(row: UserRow): UserRecord {
  return {
    ...camelCased(row, ['id', 'username', 'email', 'first_name', 'last_name']),
    isAdmin: Boolean(row.is_admin),
    enabled: Boolean(row.enabled),
    hasScoreToken: row.score_token_hash !== null,
    hasCallbackSecret: row.callback_secret_sealed !== null,
    createdAt: row.created_at,
  };
}

export class UserStore implements OwnerNames, OwnerLocks {
  constructor(private readonly db: Knex) {}

  async usernamesOf(ids: readonly number[], trx?: StoreTransaction): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map();
    const rows = (await (trx ? knexOf(trx) : this.db)('users')
      .whereIn('id', [...new Set(ids)])
      .select('id', 'username')) as Array<{ id: number; username: string }>;
    return new Map(rows.map((row) => [row.id, row.username]));
  }

  async lockOwner(trx: StoreTransaction, ownerId: number): Promise<void> {
    await knexOf(trx)('users').where('id', ownerId).forUpdate().first('id');
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    const row = await this.db<UserRow>('users').where({ username }).first();
    return row ? toUser(row) : undefined;
  }

  async findById(id: number): Promise<UserRecord | undefined> {
    const row = await this.db<UserRow>('users').where({ id }).first();
    return row ? toUser(row) : undefined;
  }

  async findByScoreTokenHash(hash: Buffer): Promise<UserRecord | undefined> {
    const row = await this.db<UserRow>('users')
      .where('score_token_hash', hash as unknown as string)
      .first();
    return row ? toUser(row) : undefined;
  }

  /** Inserts the user, without a score token, unless the username exists (a concurrent first request may have won). */
  async insertIfMissing(user: { username: string; isAdmin: boolean }): Promise<void> {
    await this.db('users').insert({ username: user.username, is_admin: user.isAdmin }).onConflict('username').ignore();
  }

  async setAdmin(id: number, isAdmin: boolean): Promise<void> {
    await this.db('users').where({ id }).update({ is_admin: isAdmin });
  }

  async setEnabled(id: number, enabled: boolean): Promise<void> {
    await this.db('users').where({ id }).update({ enabled });
  }

  /**
   * Stores `hash` as the user's score token, replacing any other when `replace`, else only when
   * the user has none. Answers whether it was stored.
   */
  async setScoreTokenHash(id: number, hash: Buffer, replace: boolean): Promise<boolean> {
    const query = this.db('users').where({ id });
    if (!replace) query.whereNull('score_token_hash');
    return (await query.update({ score_token_hash: hash })) === 1;
  }

  /**
   * Stores `sealed` as the user's callback secret, replacing any other when `replace`, else only when the user
   * has none. A replaced secret is kept as the previous one for `overlapSeconds` (none kept when 0); a previous
   * one kept from an earlier rotation is dropped. Answers whether it was stored.
   */
  async setCallbackSecret(id: number, sealed: Buffer, replace: boolean, overlapSeconds = 0): Promise<boolean> {
    const query = this.db('users').where({ id });
    if (!replace) query.whereNull('callback_secret_sealed');
    const keep = replace && overlapSeconds > 0;
    // MySQL assigns left to right, each assignment seeing the ones before it: the previous columns read the
    // secret being replaced, so they come before callback_secret_sealed (knex keeps the object's order).
    return (
      (await query.update({
        callback_secret_previous_sealed: keep ? this.db.raw('callback_secret_sealed') : null,
        callback_secret_previous_until: keep
          ? this.db.raw('IF(callback_secret_sealed IS NULL, NULL, NOW(3) + INTERVAL ? SECOND)', [overlapSeconds])
          : null,
        callback_secret_sealed: sealed,
        callback_secret_issued_at: this.db.fn.now(),
      })) === 1
    );
  }

  /** The user's sealed callback secret, if one was issued, and the one it replaced while its overlap lasts (database clock). */
  async sealedCallbackSecrets(id: number): Promise<{ current: Buffer; previous?: Buffer } | undefined> {
    const row = (await this.db('users')
      .where({ id })
      .first(
        'callback_secret_sealed',
        this.db.raw(
          'IF(callback_secret_previous_until > NOW(3), callback_secret_previous_sealed, NULL) AS previous_sealed',
        ),
      )) as { callback_secret_sealed: Buffer | null; previous_sealed: Buffer | null } | undefined;
    if (!row?.callback_secret_sealed) return undefined;
    return { current: row.callback_secret_sealed, ...(row.previous_sealed ? { previous: row.previous_sealed } : {}) };
  }
}
