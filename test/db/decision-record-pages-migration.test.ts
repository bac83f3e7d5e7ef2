import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { createDatabase, ensureDatabaseExists } from '../../src/db/database.js';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';

/**
 * Migrations 20261127000100 and 20261127000200 (the pages' sizes): the first moves every record of the one-row-per-record table to a page of its own:
 * nothing lost, every value read back the same through the page store; `down` moves them back.
 * On a database of its own, migrated to the migration before.
 */

const DATABASE = `mysql://root@127.0.0.1:3306/scoring_migration_${process.pid}`;
let db: Knex;

beforeAll(async () => {
  await ensureDatabaseExists(DATABASE);
  db = createDatabase(DATABASE, { min: 0, max: 2 });
  for (;;) {
    const [, pending] = (await db.migrate.list()) as [unknown, Array<{ file: string } | string>];
    const next = pending.map((entry) => (typeof entry === 'string' ? entry : entry.file))[0];
    if (!next || next.startsWith('20261127000100')) break;
    await db.migrate.up();
  }
}, 120_000);
afterAll(async () => {
  await db.raw('DROP DATABASE IF EXISTS ??', [new URL(DATABASE).pathname.slice(1)]);
  await db.destroy();
});

const oldRow = (k: number, overrides: Record<string, unknown> = {}) => ({
  id: `0190a0b0-0000-7000-8000-00000000000${k}`,
  owner_id: 1,
  scenario_id: 99,
  scenario_name: 'credit',
  version: '1',
  version_id: 5,
  mode: 'SYNC',
  requester_id: 1,
  request_id: `req-${k}`,
  batch_id: null,
  state: 'SUCCEEDED',
  inputs: JSON.stringify({ k, text: 'a\tb "q" é \\ 😀' }),
  masked_inputs: null,
  result: JSON.stringify({ decision: 'APPROVE', k }),
  error: null,
  began_at: `2026-11-20 10:00:0${k}.123`,
  ended_at: `2026-11-20 10:00:0${k}.456`,
  duration_micros: 333,
  trace: null,
  captures: null,
  ...overrides,
});

describe('migration 20261127000100_decision_record_pages', () => {
  it('moves every record to a page of its own, values unchanged and newest first, and back on down', async () => {
    await db('decision_records').insert([
      oldRow(1),
      oldRow(2, {
        state: 'FAILED',
        result: null,
        error: JSON.stringify({ code: 'SCRIPT_ERROR', message: 'x' }),
        masked_inputs: '["ssn"]',
        batch_id: 'b1',
        mode: 'BATCH',
        trace: '[]',
        captures: '[{"seq":0,"kind":"HTTP_CALL"}]',
      }),
      oldRow(3),
    ]);
    await db.migrate.up();
    // 20261127000200 measures the moved pages.
    await db.migrate.up();
    const sizes = (await db('decision_record_pages').select('bytes', db.raw('LENGTH(body) AS measured'))) as Array<{
      bytes: number;
      measured: number;
    }>;
    expect(sizes.map((row) => row.bytes)).toEqual(sizes.map((row) => row.measured));
    const store = new MySqlDecisionRecordStore(db);
    const listed = (await store.list(99, {}, undefined, 10)).records;
    expect(listed.map((record) => record.requestId)).toEqual(['req-3', 'req-2', 'req-1']);
    expect(await store.get(99, '0190a0b0-0000-7000-8000-000000000002')).toEqual({
      id: '0190a0b0-0000-7000-8000-000000000002',
      ownerId: 1,
      scenarioId: 99,
      scenarioName: 'credit',
      version: '1',
      versionId: 5,
      mode: 'BATCH',
      requesterId: 1,
      requestId: 'req-2',
      batchId: 'b1',
      state: 'FAILED',
      inputs: { k: 2, text: 'a\tb "q" é \\ 😀' },
      maskedInputs: ['ssn'],
      result: null,
      error: { code: 'SCRIPT_ERROR', message: 'x' },
      beganAt: new Date('2026-11-20T10:00:02.123Z'),
      endedAt: new Date('2026-11-20T10:00:02.456Z'),
      durationMicros: 333,
      trace: [],
      captures: [{ seq: 0, kind: 'HTTP_CALL' }],
    });
    expect(await store.count(99, { state: 'FAILED' }, 10)).toBe(1);
    expect((await store.list(99, { requestId: 'req-3' }, undefined, 10)).records).toHaveLength(1);

    await db.migrate.down();
    await db.migrate.down();
    const back = (await db('decision_records')
      .orderBy('began_at')
      .select('request_id', 'inputs', 'began_at')) as Array<{ request_id: string; inputs: string }>;
    expect(back.map((row) => [row.request_id, JSON.parse(row.inputs)])).toEqual(
      [1, 2, 3].map((k) => [`req-${k}`, { k, text: 'a\tb "q" é \\ 😀' }]),
    );
  });
});
