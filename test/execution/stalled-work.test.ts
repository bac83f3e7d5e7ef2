import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

let t: TestApp;
let alice: TestUser;

beforeAll(async () => {
  isolateJobStore('stalled');
  const suiteValue = process.env.STALLED_WORK_AFTER_SECONDS;
  process.env.STALLED_WORK_AFTER_SECONDS = '60';
  t = await createTestApp({ configOverrides: { batchChunkSize: 10 } });
  // Back to the suite's value (test/support/global-setup.js) for the files after this one.
  if (suiteValue === undefined) delete process.env.STALLED_WORK_AFTER_SECONDS;
  else process.env.STALLED_WORK_AFTER_SECONDS = suiteValue;
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  // The worker without its periodic sweeper: this test sweeps by hand, and the sweeper's first sweep
  // (started, not awaited, by startWorker) could still be running under load and claim part of the work.
  await t.services.execution.worker.start();
});
afterAll(() => t.close());

/** Work stored as the API stores it, whose job was never saved (the API process died in between), 2 minutes ago. */
async function storeWithoutJob(): Promise<{ runId: string; batchId: string }> {
  const { store } = t.services.execution;
  const runId = randomUUID();
  await store.insertAsyncRun({
    id: runId,
    userId: alice.id,
    requestId: `lost-${runId}`,
    scenarioName: 'double',
    input: { a: 5 },
    callback: null,
  });
  const batchId = randomUUID();
  await t.services.execution.batchStore.insertBatch({
    id: batchId,
    userId: alice.id,
    scenarioName: 'double',
    chunkSize: 10,
    inputs: Array.from({ length: 25 }, (_, i) => ({ a: 100 + i })),
  });
  const twoMinutesAgo = new Date(Date.now() - 120_000);
  await t.services.db('run_results').where({ id: runId }).update({ queued_at: twoMinutesAgo });
  await t.services.db('batch_chunks').where({ batch_id: batchId }).update({ queued_at: twoMinutesAgo });
  return { runId, batchId };
}

describe('the stalled-work sweeper', () => {
  it('queues again runs and batches stored without a job, once, and they finish', async () => {
    const { runId, batchId } = await storeWithoutJob();
    const swept = await t.services.execution.sweeper.sweepOnce();
    // The sweeper looks at the whole test database: in a full run, other files' work that was never
    // given a worker (submitted over a minute ago) is stalled too and counted with this test's.
    expect(swept.runs).toBeGreaterThanOrEqual(1);
    expect(swept.chunks).toBeGreaterThanOrEqual(3);
    const claimedAfter = new Date(Date.now() - 60_000);
    const unclaimed = await t.services
      .db('run_results')
      .where((query) => query.where({ id: runId }).orWhere('batch_id', batchId))
      .andWhere('queued_at', '<', claimedAfter)
      .count({ n: '*' });
    expect(unclaimed).toEqual([{ n: 0 }]);
    // Claimed: a second sweep (another worker's) queues none of it again. (Its counts are not 0 in a full
    // run when another file's work turns a minute old in between: what is checked is this test's rows,
    // whose queued_at only a claim moves.)
    const queuedAt = async () =>
      [
        ...(await t.services.db('run_results').where({ id: runId }).pluck('queued_at')),
        ...(await t.services.db('batch_chunks').where({ batch_id: batchId }).orderBy('from_index').pluck('queued_at')),
      ].map((at: Date) => at.getTime());
    const claimedAt = await queuedAt();
    await t.services.execution.sweeper.sweepOnce();
    expect(await queuedAt()).toEqual(claimedAt);

    const run = await waitFor(async () => {
      const row = await t.services.db('run_results').where({ id: runId }).first('state', 'result');
      return row?.state === 'SUCCEEDED' ? row : undefined;
    });
    expect(JSON.parse(run.result)).toEqual({ doubled: 10 });
    const batch = await waitFor(async () => {
      const row = await t.services.db('batches').where({ id: batchId }).first('finished_at');
      return row?.finished_at ? row : undefined;
    });
    expect(batch.finished_at).toBeTruthy();
    const elements = (await t.services.db('run_results').where({ batch_id: batchId }).select('state')) as Array<{
      state: string;
    }>;
    expect(elements).toHaveLength(25);
    expect(elements.every((row) => row.state === 'SUCCEEDED')).toBe(true);
  });

  it('leaves alone work queued recently', async () => {
    const { store } = t.services.execution;
    const id = randomUUID();
    await store.insertAsyncRun({
      id,
      userId: alice.id,
      requestId: `fresh-${randomUUID()}`,
      scenarioName: 'double',
      input: { a: 1 },
      callback: null,
    });
    const queuedAt = () => t.services.db('run_results').where({ id }).pluck('queued_at');
    const before = await queuedAt();
    await t.services.execution.sweeper.sweepOnce();
    // Not claimed (a claim moves queued_at); the sweep's counts may include other files' old work.
    expect(await queuedAt()).toEqual(before);
  });
});
