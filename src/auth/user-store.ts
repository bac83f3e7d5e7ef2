import type { Knex } from 'knex';

export interface UserRecord {
  id: number;
  username: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  isAdmin: boolean;
  enabled: boolean;
  scoreToken: string;
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
  score_token: string;
  created_at: Date;
}

function toUser(row: UserRow): UserRecord {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    isAdmin: Boolean(row.is_admin),
    enabled: Boolean(row.enabled),
    scoreToken: row.score_token,
    createdAt: row.created_at,
  };
}

export class UserStore {
  constructor(private readonly db: Knex) {}

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    const row = await this.db<UserRow>('users').where({ username }).first();
    return row ? toUser(row) : undefined;
  }

  async findById(id: number): Promise<UserRecord | undefined> {
    const row = await this.db<UserRow>('users').where({ id }).first();
    return row ? toUser(row) : undefined;
  }

  async findByScoreTokenHash(hash: Buffer): Promise<UserRecord | undefined> {
    const row = await this.db<UserRow>('users').where('score_token_hash', hash as unknown as string).first();
    return row ? toUser(row) : undefined;
  }

  /** Inserts the user unless the username exists (a concurrent first request may have won). */
  async insertIfMissing(user: { username: string; isAdmin: boolean; scoreToken: string; scoreTokenHash: Buffer }): Promise<void> {
    await this.db('users')
      .insert({ username: user.username, is_admin: user.isAdmin, score_token: user.scoreToken, score_token_hash: user.scoreTokenHash })
      .onConflict('username')
      .ignore();
  }

  async setAdmin(id: number, isAdmin: boolean): Promise<void> {
    await this.db('users').where({ id }).update({ is_admin: isAdmin });
  }
}
