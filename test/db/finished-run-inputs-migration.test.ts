import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { createDatabase, ensureDatabaseExists } from '../../src/db/database.js';

/**
 * Migration 20261128002900_finished_run_inputs: the inputs kept for finished async runs and finished batch parts
 * (personal data, maybe) are removed; those of unfinished work stay. On a database of its own, migrated to the
 * migration before.
 */

const DATABASE = `mysql://root@127.0.0.1:3306/scoring_migration_inputs_${process.pid}`;
let db: Knex;

beforeAll(async () => {
  await ensureDatabaseExists(DATABASE);
  db = createDatabase(DATABASE, { min: 0, max: 2 });
  for (;;) {
    const [, pending] = (await db.migrate.list()) as [unknown, Array<{ file: string } | string>];
    const next = pending.map((entry) => (typeof entry === 'string' ? entry : entry.file))[0];
    if (!next || next.startsWith('20261128002900')) break;
    await db.migrate.up();
  }
}, 120_000);
afterAll(async () => {
  await db.raw('DROP DATABASE IF EXISTS ??', [new URL(DATABASE).pathname.slice(1)]);
  await db.destroy();
});

describe('migration 20261128002900_finished_run_inputs', () => {
  it('removes the inputs of finished runs and finished batch parts, and keeps those of unfinished ones', async () => {
    const [userId] = await db('users').insert({ username: 'pii-owner', is_admin: false });
    const input = JSON.stringify({ ssn: '123-45-6789' });
    await db('run_results').insert([
      { id: 'r-succeeded', user_id: userId, request_id: 'a', scenario_name: 's', state: 'SUCCEEDED', input },
      { id: 'r-failed', user_id: userId, request_id: 'b', scenario_name: 's', state: 'FAILED', input },
      { id: 'r-queued', user_id: userId, request_id: 'c', scenario_name: 's', state: 'QUEUED', input },
      { id: 'r-running', user_id: userId, request_id: 'd', scenario_name: 's', state: 'RUNNING', input },
    ]);
    await db('batches').insert({ id: 'b1', user_id: userId, scenario_name: 's', total: 4, chunk_count: 2 });
    await db('batch_chunks').insert([
      { batch_id: 'b1', from_index: 0, to_index: 2, inputs: `[${input},${input}]`, finished_at: db.fn.now(3) },
      { batch_id: 'b1', from_index: 2, to_index: 4, inputs: `[${input},${input}]` },
    ]);
    await db.migrate.up();
    expect(await db('run_results').orderBy('id').select('id', 'input')).toEqual([
      { id: 'r-failed', input: null },
      { id: 'r-queued', input },
      { id: 'r-running', input },
      { id: 'r-succeeded', input: null },
    ]);
    expect(await db('batch_chunks').orderBy('from_index').select('from_index', 'inputs')).toEqual([
      { from_index: 0, inputs: '[]' },
      { from_index: 2, inputs: `[${input},${input}]` },
    ]);
  });
});
