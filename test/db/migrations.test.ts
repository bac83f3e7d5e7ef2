import { createHash } from 'node:crypto';
import { jest } from '@jest/globals';
import { UserService } from '../../src/auth/user-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { planRenames } from '../../src/db/migrations/20261123000102_case_sensitive_names.js';
import { createLegacyDatabase, type LegacyDatabase } from '../support/legacy-database.js';

/** The migrations of issue 9, run on databases holding data written by the previous schema. */

const BEFORE_ISSUE_9 = '20261122000006_run_queued_at';
const sha256 = (text: string) => createHash('sha256').update(text).digest();

async function withWarnings(work: () => Promise<void>): Promise<string[]> {
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    await work();
    return warn.mock.calls.map((call) => String(call[0]));
  } finally {
    warn.mockRestore();
  }
}

async function insertUser(db: LegacyDatabase['db'], username: string, token: string): Promise<number> {
  const [id] = await db('users').insert({ username, score_token: token, score_token_hash: sha256(token) });
  return Number(id);
}

async function collationOf(db: LegacyDatabase['db'], table: string, column: string): Promise<string> {
  const [rows] = (await db.raw(
    'SELECT COLLATION_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?',
    [table, column],
  )) as [Array<{ c: string }>];
  return rows[0].c;
}

describe('on a database an operator created with a case-insensitive collation', () => {
  let legacy: LegacyDatabase;
  let warnings: string[];
  let alice: number;

  beforeAll(async () => {
    legacy = await createLegacyDatabase('legacy_ci', 'utf8mb4_general_ci', BEFORE_ISSUE_9);
    const { db } = legacy;
    alice = await insertUser(db, 'alice', 'legacy-token-of-alice');
    await insertUser(db, 'bob', 'legacy-token-of-bob');
    await db('scenarios').insert([
      { owner_id: alice, name: 'credit-decision' },
      { owner_id: alice, name: 'padded  ' },
    ]);
    await db('internal_collections').insert({ owner_id: alice, name: 'customers', columns: '[]' });
    warnings = await withWarnings(() => legacy.migrateToLatest());
  });
  afterAll(async () => legacy.drop());

  it('keeps every user, scenario and collection', async () => {
    expect(await legacy.db('users').orderBy('id').pluck('username')).toEqual(['alice', 'bob']);
    expect(await legacy.db('scenarios').orderBy('id').pluck('name')).toEqual(['credit-decision', 'padded']);
    expect(await legacy.db('internal_collections').pluck('name')).toEqual(['customers']);
  });

  it('drops the plain-text score tokens and keeps every token working through its hash', async () => {
    const [columns] = (await legacy.db.raw('SHOW COLUMNS FROM users')) as [Array<{ Field: string }>];
    expect(columns.map((column) => column.Field)).not.toContain('score_token');
    const users = new UserService(new UserStore(legacy.db), { scoreTokenCacheMs: 0 });
    expect(await users.authenticateScoreToken('legacy-token-of-alice')).toMatchObject({ id: alice, username: 'alice' });
    expect(await users.authenticateScoreToken('legacy-token-of-bob')).toMatchObject({ username: 'bob' });
  });

  it('makes usernames, scenario names and collection names case-sensitive', async () => {
    for (const [table, column] of [
      ['users', 'username'],
      ['scenarios', 'name'],
      ['internal_collections', 'name'],
      ['run_results', 'scenario_name'],
      ['batches', 'scenario_name'],
    ]) {
      expect(await collationOf(legacy.db, table, column)).toBe('utf8mb4_bin');
    }
    await legacy.db('users').insert({ username: 'ALICE' });
    await legacy.db('scenarios').insert({ owner_id: alice, name: 'CREDIT-DECISION' });
    await legacy.db('internal_collections').insert({ owner_id: alice, name: 'Customers', columns: '[]' });
    expect(await legacy.db('users').where({ username: 'alice' }).pluck('id')).toEqual([alice]);
    expect(await legacy.db('scenarios').where({ owner_id: alice, name: 'credit-decision' }).pluck('name')).toEqual([
      'credit-decision',
    ]);
  });

  it('trims a name with surrounding whitespace and reports it', () => {
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /scenario name "padded {2}" \(scenarios id \d+\) had surrounding whitespace and is now "padded"/,
      ),
    );
  });
});

describe('on a database whose old collation kept names apart that now collide', () => {
  let legacy: LegacyDatabase;
  let warnings: string[];

  beforeAll(async () => {
    // NO PAD: `report` and `report ` were two scenarios; trimmed, they would be one.
    legacy = await createLegacyDatabase('legacy_nopad', 'utf8mb4_general_nopad_ci', BEFORE_ISSUE_9);
    const owner = await insertUser(legacy.db, 'carol', 'legacy-token-of-carol');
    await legacy.db('scenarios').insert([
      { owner_id: owner, name: 'report' },
      { owner_id: owner, name: 'report ' },
      { owner_id: owner, name: 'REPORT  ' },
    ]);
    warnings = await withWarnings(() => legacy.migrateToLatest());
  });
  afterAll(async () => legacy.drop());

  it('keeps both, renames the whitespace one with its id, and reports the collision', async () => {
    const rows = (await legacy.db('scenarios').orderBy('id').select('id', 'name')) as Array<{
      id: number;
      name: string;
    }>;
    expect(rows.map((row) => row.name)).toEqual(['report', `report_${rows[1].id}`, `REPORT_${rows[2].id}`]);
    expect(warnings.filter((line) => /had surrounding whitespace/.test(line))).toHaveLength(2);
  });
});

describe('on a database created with the binary collation, holding names that differ only in case', () => {
  let legacy: LegacyDatabase;
  let warnings: string[];

  beforeAll(async () => {
    legacy = await createLegacyDatabase('legacy_bin', 'utf8mb4_bin', BEFORE_ISSUE_9);
    const owner = await insertUser(legacy.db, 'dave', 'legacy-token-of-dave');
    await legacy.db('internal_collections').insert([
      { owner_id: owner, name: 'customers', columns: '[]' },
      { owner_id: owner, name: 'Customers', columns: '[]' },
    ]);
    warnings = await withWarnings(() => legacy.migrateToLatest());
  });
  afterAll(async () => legacy.drop());

  it('keeps them apart and reports them', async () => {
    expect(await legacy.db('internal_collections').orderBy('id').pluck('name')).toEqual(['customers', 'Customers']);
    expect(warnings).toContainEqual(
      expect.stringMatching(/collection names "customers", "Customers" differ only in case/),
    );
  });
});

describe('planRenames', () => {
  it('stays within the column length and never reuses a name, ignoring case', () => {
    const rows = [
      { id: 1, scope: 1, name: 'a'.repeat(10) },
      { id: 2, scope: 1, name: ` ${'A'.repeat(10)} ` },
      { id: 3, scope: 1, name: '   ' },
      { id: 4, scope: 2, name: ` ${'a'.repeat(10)}` },
    ];
    expect(planRenames('t', rows, 10)).toEqual([
      { table: 't', id: 2, from: ` ${'A'.repeat(10)} `, to: `${'A'.repeat(8)}_2` },
      { table: 't', id: 3, from: '   ', to: 'unnamed' },
      { table: 't', id: 4, from: ` ${'a'.repeat(10)}`, to: 'a'.repeat(10) },
    ]);
  });
});
