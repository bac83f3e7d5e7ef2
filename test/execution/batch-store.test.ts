import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MySqlBatchStore, type ElementOutcome } from '../../src/execution/batch-store.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

let t: TestApp;
let store: MySqlBatchStore;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  store = new MySqlBatchStore(t.services.db);
  alice = await t.newUser();
});
afterAll(() => t.close());

const outcome = (state: 'SUCCEEDED' | 'FAILED'): ElementOutcome['outcome'] =>
  state === 'SUCCEEDED'
    ? { state, result: { ok: true }, error: null, version: '1', beganAt: new Date(), endedAt: new Date() }
    : {
        state,
        result: null,
        error: { code: 'SCRIPT_ERROR', message: "it's broken", nodeId: 'n' },
        version: '1',
        beganAt: new Date(),
        endedAt: new Date(),
      };

async function progressOf(batchId: string) {
  return (await store.batchProgress(batchId))?.progress;
}

async function newBatch(inputs: Array<Record<string, unknown>>, chunkSize: number): Promise<string> {
  const id = randomUUID();
  await store.insertBatch({ id, userId: alice.id, scenarioName: 'double', chunkSize, inputs });
  return id;
}

describe('BatchStore', () => {
  it('splits a chunk whose inputs pass 4 MiB of JSON into parts, and reads them back in element order', async () => {
    const big = 'x'.repeat(1_500_000);
    const inputs = Array.from({ length: 7 }, (_, i) => ({ i, big, note: "quote ' and backslash \\" }));
    const batchId = await newBatch(inputs, 5);
    const first = await store.chunkWork({ batchId, from: 0, to: 5 });
    expect(first?.parts.map((part) => [part.from, part.to])).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    expect(first?.parts.flatMap((part) => part.inputs)).toEqual(inputs.slice(0, 5));
    const second = await store.chunkWork({ batchId, from: 5, to: 7 });
    expect(second?.parts.map((part) => [part.from, part.to])).toEqual([[5, 7]]);
    expect(second?.batch).toMatchObject({
      id: batchId,
      userId: alice.id,
      scenarioName: 'double',
      total: 7,
      chunkCount: 2,
      finishedAt: null,
    });
  });

  it('answers no chunk work and no progress for a batch that is gone', async () => {
    expect(await store.chunkWork({ batchId: randomUUID(), from: 0, to: 5 })).toBeUndefined();
    expect(await store.batchProgress(randomUUID())).toBeUndefined();
  });

  it('counts finished parts from their counts and unfinished ones from their stored results', async () => {
    const batchId = await newBatch(
      Array.from({ length: 9 }, (_, i) => ({ i })),
      3,
    );
    const batch = (await store.findBatch(batchId))!;
    expect(await progressOf(batchId)).toEqual({ succeeded: 0, failed: 0, started: false });

    await store.markStarted({ batchId, from: 0, to: 6 });
    await store.insertResults(batch, [
      { index: 0, outcome: outcome('SUCCEEDED') },
      { index: 1, outcome: outcome('FAILED') },
      { index: 2, outcome: outcome('SUCCEEDED') },
    ]);
    await store.insertResults(batch, [{ index: 3, outcome: outcome('FAILED') }]);
    expect(await progressOf(batchId)).toEqual({ succeeded: 2, failed: 2, started: true });

    await store.markPartFinished(batchId, { from: 0, to: 3 });
    const counted = await t.services
      .db('batch_chunks')
      .where({ batch_id: batchId })
      .orderBy('from_index')
      .select('succeeded', 'failed', 'finished_at');
    expect(counted.map((part: { succeeded: number; failed: number }) => [part.succeeded, part.failed])).toEqual([
      [2, 1],
      [0, 0],
      [0, 0],
    ]);
    // The finished part now answers from its counts, even if its rows were to change.
    await t.services.db('run_results').where({ batch_id: batchId, element_index: 0 }).delete();
    expect(await progressOf(batchId)).toEqual({ succeeded: 2, failed: 2, started: true });
  });

  it('stores an element once, and a part run twice keeps its larger count', async () => {
    const batchId = await newBatch(
      Array.from({ length: 2 }, (_, i) => ({ i })),
      2,
    );
    const batch = (await store.findBatch(batchId))!;
    await store.insertResults(batch, [
      { index: 0, outcome: outcome('SUCCEEDED') },
      { index: 1, outcome: outcome('SUCCEEDED') },
    ]);
    await store.markPartFinished(batchId, { from: 0, to: 2 });
    await store.insertResults(batch, [
      { index: 0, outcome: outcome('FAILED') },
      { index: 1, outcome: outcome('FAILED') },
    ]);
    await store.markPartFinished(batchId, { from: 0, to: 2 });
    const rows = await t.services.db('run_results').where({ batch_id: batchId }).select('state');
    expect(rows.map((row: { state: string }) => row.state)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(await progressOf(batchId)).toEqual({ succeeded: 2, failed: 0, started: false });
    expect(await store.finishIfComplete(batchId)).toBe(true);
  });

  it('stores a failed element with its error, quotes and all', async () => {
    const batchId = await newBatch([{ i: 0 }], 1);
    const batch = (await store.findBatch(batchId))!;
    await store.insertResults(batch, [{ index: 0, outcome: outcome('FAILED') }]);
    await store.markPartFinished(batchId, { from: 0, to: 1 });
    await store.finishIfComplete(batchId);
    const lines = [];
    for await (const page of store.results(batchId, 10)) lines.push(...page);
    expect(lines).toEqual([
      {
        index: 0,
        resultId: expect.any(String),
        state: 'FAILED',
        result: null,
        error: { code: 'SCRIPT_ERROR', message: "it's broken", nodeId: 'n' },
      },
    ]);
  });
});
