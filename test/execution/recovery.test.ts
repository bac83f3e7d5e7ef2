import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '../../src/logger.js';
import { StalledWorkSweeper } from '../../src/execution/stalled-work-sweeper.js';
import { createAgenda, openJobStore } from '../../src/execution/job-store.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

/**
 * Issue 27, problems 5 and 6: work that has no job (its API died before saving it, or the job store
 * lost it) is queued again within seconds, and only that work: what a pending job covers (a backlog,
 * a job a dead worker still holds, a callback retry scheduled for later) is left to its job.
 */
let t: TestApp;
let alice: TestUser;
const recovered: Record<string, number> = {};
let sweeper: StalledWorkSweeper;
const LONG_AGO = () => new Date(Date.now() - 120_000);

beforeAll(async () => {
  isolateJobStore('recovery');
  t = await createTestApp({ configOverrides: { batchChunkSize: 10, outboundAllowList: ['127.0.0.1'] } });
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  const { store, batchStore, queue } = t.services.execution;
  // No worker runs in this process until the last test: jobs saved here stay pending in the store.
  sweeper = new StalledWorkSweeper(
    store,
    batchStore,
    queue,
    { stalledAfterMs: 60_000, sweepEveryMs: 60_000 },
    createLogger('silent'),
    {
      workRecovered: (kind, count) => {
        recovered[kind] = (recovered[kind] ?? 0) + count;
      },
    },
  );
});
afterAll(() => t.close());

async function queuedRun(state: 'QUEUED' | 'RUNNING' | 'SUCCEEDED' = 'QUEUED', callback = false): Promise<string> {
  const id = randomUUID();
  await t.services.execution.store.insertAsyncRun({
    id,
    userId: alice.id,
    requestId: `r-${id}`,
    scenarioName: 'double',
    input: { a: 4 },
    callback: callback ? { url: 'http://127.0.0.1:9/hook', retryCount: 3, retryDelaySeconds: 3600 } : null,
  });
  await t.services
    .db('run_results')
    .where({ id })
    .update({
      state,
      queued_at: LONG_AGO(),
      ...(state === 'SUCCEEDED' ? { finished_at: LONG_AGO(), result: '{"doubled":8}' } : {}),
    });
  return id;
}
const queuedAt = async (id: string) =>
  ((await t.services.db('run_results').where({ id }).first('queued_at')) as { queued_at: Date }).queued_at.getTime();
const jobData = async (name: string) =>
  (await t.services.execution.queue.jobsInStore()).pending
    .filter((job) => job.name === name)
    .map((job) => job.data as Record<string, unknown>);

describe('recovery of work without a job', () => {
  it('queues again a QUEUED run that has no job, and counts it as recovered', async () => {
    const id = await queuedRun('QUEUED');
    const before = recovered.runs ?? 0;
    const swept = await sweeper.sweepOnce();
    expect(swept.runs).toBeGreaterThanOrEqual(1);
    expect((recovered.runs ?? 0) - before).toBe(swept.runs);
    expect((await jobData('execution.run')).some((data) => (data.resultIds as string[]).includes(id))).toBe(true);
  });

  it('leaves alone a run waiting behind a backlog: its job is pending', async () => {
    const id = await queuedRun('QUEUED');
    await t.services.execution.queue.enqueueRuns([id]);
    const at = await queuedAt(id);
    await sweeper.sweepOnce();
    expect(await queuedAt(id)).toBe(at);
    expect((await jobData('execution.run')).filter((data) => (data.resultIds as string[]).includes(id))).toHaveLength(
      1,
    );
  });

  it('queues again a RUNNING run whose job is gone (its worker died and the job store lost the job)', async () => {
    const id = await queuedRun('RUNNING');
    await sweeper.sweepOnce();
    expect((await jobData('execution.run')).some((data) => (data.resultIds as string[]).includes(id))).toBe(true);
  });

  it('schedules the next attempt of a PENDING callback whose job is gone, at once', async () => {
    const id = await queuedRun('SUCCEEDED', true);
    await t.services.execution.store.recordCallbackAttempt(id, {
      attempt: 1,
      httpStatus: 500,
      error: 'answered HTTP 500',
    });
    const before = recovered.callbacks ?? 0;
    await sweeper.sweepOnce();
    expect(recovered.callbacks! - before).toBeGreaterThanOrEqual(1);
    expect(await jobData('execution.callback')).toContainEqual({ resultId: id, attempt: 2 });
  });

  it('leaves alone a callback whose retry is scheduled for later', async () => {
    const id = await queuedRun('SUCCEEDED', true);
    await t.services.execution.queue.scheduleCallback(id, 2, 3600);
    const at = await queuedAt(id);
    await sweeper.sweepOnce();
    expect(await queuedAt(id)).toBe(at);
    expect((await jobData('execution.callback')).filter((data) => data.resultId === id)).toHaveLength(1);
  });

  it('queues again batch parts without a job, started ones included, and leaves parts with a job alone', async () => {
    const { batchStore, queue } = t.services.execution;
    const lost = randomUUID();
    const waiting = randomUUID();
    for (const id of [lost, waiting]) {
      await batchStore.insertBatch({
        id,
        userId: alice.id,
        scenarioName: 'double',
        chunkSize: 10,
        inputs: Array.from({ length: 20 }, (_, a) => ({ a })),
      });
      await t.services.db('batch_chunks').where({ batch_id: id }).update({ queued_at: LONG_AGO() });
    }
    // The first part of the lost batch was started by a worker that died; the waiting batch's jobs are pending.
    await t.services.db('batch_chunks').where({ batch_id: lost, from_index: 0 }).update({ started_at: LONG_AGO() });
    await queue.enqueueChunks(waiting, 20, 10);
    const swept = await sweeper.sweepOnce();
    expect(swept.chunks).toBeGreaterThanOrEqual(2);
    const chunks = await jobData('execution.batch-chunk');
    expect(
      chunks
        .filter((data) => data.batchId === lost)
        .map((data) => data.from)
        .sort(),
    ).toEqual([0, 10]);
    expect(chunks.filter((data) => data.batchId === waiting)).toHaveLength(2);
  });

  it('queues each piece of work once, however many workers sweep', async () => {
    const id = await queuedRun('QUEUED');
    await Promise.all([sweeper.sweepOnce(), sweeper.sweepOnce(), sweeper.sweepOnce()]);
    expect((await jobData('execution.run')).filter((data) => (data.resultIds as string[]).includes(id))).toHaveLength(
      1,
    );
  });

  it('runs the recovered work to the end once a worker runs, and removes a job that failed for good from the store', async () => {
    const id = await queuedRun('QUEUED');
    await sweeper.sweepOnce();
    const { queue } = t.services.execution;
    queue.registerJobKind({
      name: 'test.poison',
      concurrency: 1,
      run: async () => {
        throw new Error('poison');
      },
    });
    await t.services.execution.startWorker();
    await queue.enqueue('test.poison', {});
    const run = await waitFor(async () => {
      const row = (await t.services.db('run_results').where({ id }).first('state', 'result')) as
        | { state: string; result: string }
        | undefined;
      return row?.state === 'SUCCEEDED' ? row : undefined;
    });
    expect(JSON.parse(run.result)).toEqual({ doubled: 8 });
    // Agenda keeps a job that failed for good; it is removed at once, finished or not.
    await waitFor(async () => ((await queue.pendingJobs(['test.poison'])) === 0 ? true : undefined));
  });

  it('gives up a run started RUN_MAX_ATTEMPTS times without finishing: FAILED, RUN_ABANDONED, not run again', async () => {
    // Started 3 times already (each time its worker died with it or its job failed for good), and its job is gone.
    const id = await queuedRun('RUNNING');
    await t.services.db('run_results').where({ id }).update({ attempts: 3, started_at: LONG_AGO() });
    await sweeper.sweepOnce();
    const row = await waitFor(async () => {
      const found = (await t.services
        .db('run_results')
        .where({ id })
        .first('state', 'error_code', 'error_message', 'attempts')) as {
        state: string;
        error_code: string | null;
        error_message: string | null;
        attempts: number;
      };
      return found.state === 'FAILED' ? found : undefined;
    });
    expect(row).toMatchObject({ error_code: 'RUN_ABANDONED', attempts: 4 });
    expect(row.error_message).toContain('started 3 times and never finished');
  });

  it('counts each start of a run: a run that finished the first time was started once', async () => {
    const id = await queuedRun('QUEUED');
    await t.services.execution.queue.enqueueRuns([id]);
    const row = await waitFor(async () => {
      const found = (await t.services.db('run_results').where({ id }).first('state', 'attempts')) as {
        state: string;
        attempts: number;
      };
      return found.state === 'SUCCEEDED' ? found : undefined;
    });
    expect(row.attempts).toBe(1);
  });

  it('gives up a batch part started RUN_MAX_ATTEMPTS times: its elements left end RUN_ABANDONED, and the batch finishes', async () => {
    const { batchStore } = t.services.execution;
    const batchId = randomUUID();
    await batchStore.insertBatch({
      id: batchId,
      userId: alice.id,
      scenarioName: 'double',
      chunkSize: 10,
      inputs: Array.from({ length: 10 }, (_, a) => ({ a: a + 20 })),
    });
    const batch = (await batchStore.findBatch(batchId))!;
    // Two elements were stored before; three starts never finished the rest, and the part's job is gone.
    const at = new Date();
    await batchStore.insertResults(
      batch,
      [0, 1].map((index) => ({
        index,
        outcome: {
          state: 'SUCCEEDED' as const,
          result: { doubled: 1 },
          error: null,
          version: '1',
          beganAt: at,
          endedAt: at,
        },
      })),
    );
    await t.services
      .db('batch_chunks')
      .where({ batch_id: batchId })
      .update({ attempts: 3, started_at: LONG_AGO(), queued_at: LONG_AGO() });
    await sweeper.sweepOnce();
    await waitFor(async () => ((await batchStore.findBatch(batchId))?.finishedAt ? true : undefined));
    const rows = (await t.services
      .db('run_results')
      .where({ batch_id: batchId })
      .orderBy('element_index')
      .select('state', 'error_code')) as Array<{ state: string; error_code: string | null }>;
    expect(rows.map((row) => row.error_code)).toEqual([
      null,
      null,
      ...Array.from({ length: 8 }, () => 'RUN_ABANDONED'),
    ]);
  });

  it('removes a finished job left in the store (a worker killed between recording its completion and removing it)', async () => {
    // The leftover, written as Agenda leaves it: finished, unlocked, not due again.
    const store = await openJobStore(t.config.jobsUrl, t.services.execution.settings.keyPrefix, {
      onLost: () => undefined,
      onRestored: () => undefined,
      onError: () => undefined,
    });
    try {
      const agenda = createAgenda(store, { concurrency: 1, lockLifetimeMs: 10_000, processEveryMs: 60_000 });
      await agenda.ready;
      const job = agenda.create('execution.run', { resultIds: ['left-over'] });
      job.attrs.nextRunAt = null;
      job.attrs.lastRunAt = new Date();
      job.attrs.lastFinishedAt = new Date();
      await job.save();
      const leftOver = async () =>
        (await agenda.queryJobs({ name: 'execution.run' })).jobs.filter(
          (found) => (found.data as { resultIds: string[] }).resultIds[0] === 'left-over',
        );
      expect(await leftOver()).toHaveLength(1);
      const { removed } = await t.services.execution.queue.jobsInStore();
      expect(removed).toBeGreaterThanOrEqual(1);
      expect(await leftOver()).toHaveLength(0);
    } finally {
      await store.close();
    }
  });
});
