import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { RunRetentionSweeper } from '../../src/execution/run-retention-sweeper.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { isolateJobStore } from './support.js';

/** RUN_RESULTS_RETENTION_DAYS: finished async runs and batches are deleted in short statements once expired. */

let t: TestApp;
let alice: TestUser;
const DAY = 86_400_000;
const now = new Date();
const daysAgo = (days: number) => new Date(now.getTime() - days * DAY);

beforeAll(async () => {
  isolateJobStore('run-retention');
  t = await createTestApp();
  alice = await t.newUser();
});
afterAll(async () => t.close());

async function run(overrides: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  await t.services.db('run_results').insert({
    id,
    user_id: alice.id,
    request_id: randomUUID(),
    scenario_name: 'double',
    state: 'SUCCEEDED',
    result: '{"doubled":2}',
    ...overrides,
  });
  return id;
}

async function batch(finishedAt: Date | null, elements: number): Promise<string> {
  const id = randomUUID();
  await t.services.db('batches').insert({
    id,
    user_id: alice.id,
    scenario_name: 'double',
    total: elements,
    chunk_count: 1,
    finished_at: finishedAt,
  });
  await t.services
    .db('batch_chunks')
    .insert({ batch_id: id, from_index: 0, to_index: elements, inputs: '[]', finished_at: finishedAt });
  for (let index = 0; index < elements; index += 1)
    await run({ batch_id: id, element_index: index, finished_at: finishedAt });
  return id;
}

const exists = async (table: string, id: string) =>
  (await t.services.db(table).where({ id }).first('id')) !== undefined;

describe('RunRetentionSweeper', () => {
  it('is 30 days unless RUN_RESULTS_RETENTION_DAYS says otherwise', () => {
    expect(t.services.execution.settings.resultRetentionDays).toBe(30);
  });

  it('deletes finished async runs and batches that finished before the retention, and keeps the rest', async () => {
    const expired = await run({ finished_at: daysAgo(31) });
    const expiredFailed = await run({
      state: 'FAILED',
      result: null,
      error_code: 'SCRIPT_ERROR',
      error_message: 'x',
      finished_at: daysAgo(40),
    });
    await t.services.db('callback_attempts').insert({ result_id: expired, attempt: 1, http_status: 200 });
    const recent = await run({ finished_at: daysAgo(29) });
    const stillDelivering = await run({
      finished_at: daysAgo(31),
      callback_url: 'http://127.0.0.1/x',
      callback_state: 'PENDING',
    });
    const unfinished = await run({ state: 'QUEUED', result: null, finished_at: null, created_at: daysAgo(40) });
    const oldBatch = await batch(daysAgo(31), 5);
    const newBatch = await batch(daysAgo(1), 2);
    const runningBatch = await batch(null, 2);

    // Two rows per statement: the loops over statements are exercised too.
    const sweeper = new RunRetentionSweeper(
      t.services.execution.store,
      t.services.execution.batchStore,
      { retentionDays: 30, everyMs: 60_000, batchSize: 2, pauseMs: 1 },
      pino({ level: 'silent' }),
    );
    const deleted = await sweeper.sweepOnce(now);
    expect(deleted.batches).toBeGreaterThanOrEqual(1);
    expect(deleted.runs).toBeGreaterThanOrEqual(2);
    for (const id of [expired, expiredFailed]) expect(await exists('run_results', id)).toBe(false);
    expect(await t.services.db('callback_attempts').where({ result_id: expired }).first()).toBeUndefined();
    for (const id of [recent, stillDelivering, unfinished]) expect(await exists('run_results', id)).toBe(true);
    expect(await exists('batches', oldBatch)).toBe(false);
    expect(await t.services.db('run_results').where({ batch_id: oldBatch }).count({ n: '*' }).first()).toEqual({
      n: 0,
    });
    expect(await t.services.db('batch_chunks').where({ batch_id: oldBatch }).first()).toBeUndefined();
    for (const id of [newBatch, runningBatch]) {
      expect(await exists('batches', id)).toBe(true);
      expect(await t.services.db('run_results').where({ batch_id: id }).count({ n: '*' }).first()).toEqual({ n: 2 });
    }
  });
});
