import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { storedRecordCount } from '../records/stored-records.js';
import { isolateJobStore } from './support.js';

/**
 * Issue 27, problem 8: a worker killed mid-batch left 128 extra BATCH records: elements recorded before
 * their results were stored ran again on the next worker and were recorded again, under new ids. A run
 * is recorded once its outcome is stored. No worker runs in this file: the jobs are run by hand.
 */
let t: TestApp;
let alice: TestUser;
let scenarioId: string;

beforeAll(async () => {
  isolateJobStore('records-once');
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  scenarioId = String(
    ((await t.services.db('scenarios').where({ owner_id: alice.id, name: 'double' }).first('id')) as { id: number }).id,
  );
});
afterEach(() => {
  jest.restoreAllMocks();
});
afterAll(() => t.close());

const recordCount = async () => {
  await t.services.records.recorder.flush();
  return storedRecordCount(t.services.db, scenarioId);
};

describe('decision records of stored runs', () => {
  it('records a batch element only once its result is stored, so a chunk run again records each element once', async () => {
    const { batchStore, worker } = t.services.execution;
    const batchId = randomUUID();
    await batchStore.insertBatch({
      id: batchId,
      userId: alice.id,
      scenarioName: 'double',
      chunkSize: 20,
      inputs: Array.from({ length: 20 }, (_, a) => ({ a: a + 20 })),
    });
    const before = await recordCount();
    // The worker "dies" before its results reach MySQL: nothing of the chunk is stored.
    jest
      .spyOn(batchStore, 'insertResults')
      .mockRejectedValueOnce(new Error('the worker died before storing its results'));
    await expect(worker.chunk({ batchId, from: 0, to: 20 }, async () => undefined)).rejects.toThrow('died');
    expect(await recordCount()).toBe(before);
    // The next worker runs the chunk again: one record per element, as many as results.
    expect(await worker.chunk({ batchId, from: 0, to: 20 }, async () => undefined)).toBe(true);
    expect(await recordCount()).toBe(before + 20);
    const results = await t.services.db('run_results').where({ batch_id: batchId }).count({ n: '*' });
    expect(results).toEqual([{ n: 20 }]);
  });

  it('records an async run only once its outcome is stored', async () => {
    const { store, worker } = t.services.execution;
    const id = randomUUID();
    await store.insertAsyncRun({
      id,
      userId: alice.id,
      requestId: `once-${id}`,
      scenarioName: 'double',
      input: { a: 30 },
      callback: null,
    });
    const before = await recordCount();
    jest.spyOn(store, 'finishRuns').mockRejectedValueOnce(new Error('the worker died before storing the outcome'));
    await expect(worker.run({ resultIds: [id] })).rejects.toThrow('died');
    expect(await recordCount()).toBe(before);
    await worker.run({ resultIds: [id] });
    expect(await recordCount()).toBe(before + 1);
  });
});
