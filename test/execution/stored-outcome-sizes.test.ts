import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { MySqlBatchStore } from '../../src/execution/batch-store.js';
import { MySqlRunResultStore, type RunIdentity } from '../../src/execution/run-result-store.js';
import type { RunOutcome } from '../../src/execution/run-outcome.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

/**
 * Issue 27, problem 1: an error too large for run_results.error_message (TEXT, 64 KB) failed the
 * multi-row write it shared with other runs ("Data too long"), and every run of that write, other
 * tenants' included, stayed RUNNING for ever. Outcomes are bounded before they are written, and a
 * group write that fails anyway is retried run by run.
 */
let t: TestApp;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  isolateJobStore('outcome-sizes');
  t = await createTestApp();
  await t.services.execution.startWorker();
  alice = await t.newUser();
  bob = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, bob.id, 'double', doublingScenario());
});
afterAll(() => t.close());

/** The body of the report: 3,000 input keys the scenario does not declare (about 74 KB of JSON). */
function unknownKeys(): Record<string, unknown> {
  const input: Record<string, unknown> = { a: 1 };
  for (let k = 0; k < 3000; k += 1) input[`unknown_input_key_number_${String(k).padStart(4, '0')}`] = k;
  return input;
}

const at = new Date();
const failed = (message: string, extra: Record<string, unknown> = {}): RunOutcome => ({
  state: 'FAILED',
  result: null,
  error: { code: 'SCRIPT_ERROR', message, ...extra },
  version: '1',
  beganAt: at,
  endedAt: at,
});
const succeeded = (): RunOutcome => ({
  state: 'SUCCEEDED',
  result: { doubled: 2 },
  error: null,
  version: '1',
  beganAt: at,
  endedAt: at,
});

async function queuedRun(user: TestUser): Promise<RunIdentity> {
  const run = {
    id: randomUUID(),
    userId: user.id,
    requestId: randomUUID(),
    scenarioName: 'double',
    input: { a: 1 },
    callback: null,
  };
  await t.services.execution.store.insertAsyncRun(run);
  return { ...run, batchId: null, elementIndex: null };
}

const row = (id: string) =>
  t.services.db('run_results').where({ id }).first() as Promise<{
    state: string;
    error_code: string | null;
    error_message: string | null;
    error_details: string | null;
  }>;

describe('outcomes too large for their columns', () => {
  it('finishes the async run of a body with 3,000 unknown input keys, its error cut with a marker', async () => {
    const body = unknownKeys();
    expect(JSON.stringify(body).length).toBeGreaterThan(70_000);
    const submitted = await request(t.app)
      .post('/api/scenario/code/scoreasync/double')
      .set('Score-Token', alice.scoreToken)
      .send(body);
    expect(submitted.status).toBe(202);
    const response = await waitFor(async () => {
      const answer = await request(t.app)
        .get('/api/scenario/code/scoreasyncresult/double')
        .set('Score-Token', alice.scoreToken)
        .set('X-SCE-RequestId', submitted.body.requestId);
      return answer.status === 200 ? answer : undefined;
    }, 15_000);
    const { error } = response.body;
    expect(error.code).toBe('INVALID_INPUT');
    expect(Buffer.byteLength(error.message)).toBeLessThanOrEqual(8192);
    expect(error.message).toMatch(/… \[cut to \d+ of \d+ bytes\]$/);
    expect(error.violations.length).toBeGreaterThan(0);
    expect(error.violations.length + error.violationsOmitted).toBe(3000);
    expect(error.violations[0]).toEqual({
      variable: 'unknown_input_key_number_0000',
      message: 'is not an input of this scenario',
    });
  });

  it('finishes a batch whose elements carry 3,000 unknown input keys, next to ordinary elements', async () => {
    const submitted = await request(t.app)
      .post('/api/batch/score')
      .query({ key: alice.scoreToken })
      .send({ scenarioName: 'double', parameters: [{ a: 1 }, unknownKeys(), { a: 3 }, unknownKeys()] });
    expect(submitted.status).toBe(202);
    const status = await waitFor(async () => {
      const answer = await request(t.app)
        .get(`/api/batch/${submitted.body.batchTaskId}`)
        .query({ key: alice.scoreToken });
      return answer.body.state === 'FINISHED' ? answer : undefined;
    }, 15_000);
    expect(status.body).toMatchObject({ total: 4, completed: 4, failed: 2 });
    const lines = (
      await request(t.app).get(`/api/batch/${submitted.body.batchTaskId}/results`).query({ key: alice.scoreToken })
    ).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.state)).toEqual(['SUCCEEDED', 'FAILED', 'SUCCEEDED', 'FAILED']);
    expect(lines[1].error.violationsOmitted).toBeGreaterThan(0);
  });

  it('stores other tenants’ runs of the same group write next to a 74 KB error', async () => {
    const store = new MySqlRunResultStore(t.services.db);
    const [big, bobs, alices] = [await queuedRun(alice), await queuedRun(bob), await queuedRun(alice)];
    const message = 'x'.repeat(74_000);
    const outcomes = await store.finishRuns([
      { run: big, outcome: failed(message) },
      { run: bobs, outcome: succeeded() },
      { run: alices, outcome: succeeded() },
    ]);
    expect(outcomes).toEqual([null, null, null]);
    expect((await row(bobs.id)).state).toBe('SUCCEEDED');
    expect((await row(alices.id)).state).toBe('SUCCEEDED');
    const stored = await row(big.id);
    expect(stored.state).toBe('FAILED');
    const marker = ' … [cut to 8192 of 74000 bytes]';
    expect(stored.error_message).toBe(`${'x'.repeat(8192 - Buffer.byteLength(marker))}${marker}`);
  });

  it('retries a failed group write run by run: the run whose own write fails is stored as RESULT_NOT_STORED, the others as they are', async () => {
    const store = new MySqlRunResultStore(t.services.db);
    const [bad, bobs] = [await queuedRun(alice), await queuedRun(bob)];
    // A version longer than its column (32): the whole multi-row statement is refused.
    const unstorable: RunOutcome = { ...succeeded(), version: 'v'.repeat(40) };
    const outcomes = await store.finishRuns([
      { run: bad, outcome: unstorable },
      { run: bobs, outcome: succeeded() },
    ]);
    expect(outcomes).toEqual([null, null]);
    expect((await row(bobs.id)).state).toBe('SUCCEEDED');
    const stored = await row(bad.id);
    expect(stored).toMatchObject({ state: 'FAILED', error_code: 'RESULT_NOT_STORED' });
    expect(stored.error_message).toContain('could not be stored');
  });

  it('answers the error of the one run that cannot be stored at all, and stores the others', async () => {
    const store = new MySqlRunResultStore(t.services.db);
    const bobs = await queuedRun(bob);
    // A run of no user: the foreign key refuses its row, and its replacement too.
    const orphan: RunIdentity = {
      id: randomUUID(),
      userId: 2_000_000_000,
      requestId: randomUUID(),
      scenarioName: 'double',
      batchId: null,
      elementIndex: null,
    };
    const outcomes = await store.finishRuns([
      { run: orphan, outcome: succeeded() },
      { run: bobs, outcome: succeeded() },
    ]);
    expect(outcomes[0]).toBeInstanceOf(Error);
    expect(outcomes[1]).toBeNull();
    expect((await row(bobs.id)).state).toBe('SUCCEEDED');
  });

  it('bounds the error details of a batch element and stores its neighbours when one element cannot be stored', async () => {
    const batches = new MySqlBatchStore(t.services.db);
    const id = randomUUID();
    await batches.insertBatch({
      id,
      userId: alice.id,
      scenarioName: 'double',
      chunkSize: 10,
      inputs: [{ a: 1 }, { a: 2 }, { a: 3 }],
    });
    const batch = (await batches.findBatch(id))!;
    const violations = Array.from({ length: 3000 }, (_, k) => ({
      variable: `key_${k}`,
      message: 'is not an input of this scenario',
    }));
    await batches.insertResults(batch, [
      { index: 0, outcome: failed('y'.repeat(100_000), { violations }) },
      { index: 1, outcome: { ...succeeded(), version: 'v'.repeat(40) } },
      { index: 2, outcome: succeeded() },
    ]);
    const rows = (await t.services
      .db('run_results')
      .where({ batch_id: id })
      .orderBy('element_index')
      .select('state', 'error_code', 'error_details')) as Array<{
      state: string;
      error_code: string | null;
      error_details: string | null;
    }>;
    expect(rows.map((r) => [r.state, r.error_code])).toEqual([
      ['FAILED', 'SCRIPT_ERROR'],
      ['FAILED', 'RESULT_NOT_STORED'],
      ['SUCCEEDED', null],
    ]);
    const details = JSON.parse(rows[0].error_details!) as { violations: unknown[]; violationsOmitted: number };
    expect(Buffer.byteLength(rows[0].error_details!)).toBeLessThanOrEqual(32_768);
    expect(details.violations.length + details.violationsOmitted).toBe(3000);
  });
});
