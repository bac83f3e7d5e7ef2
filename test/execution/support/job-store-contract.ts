import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../../src/config/config.js';
import {
  CALLBACK_JOB,
  CHUNK_JOB,
  ExecutionQueue,
  RUN_JOB,
  type ChunkJobData,
  type JobHandlers,
  type RunJobData,
} from '../../../src/execution/execution-queue.js';
import { loadExecutionSettings } from '../../../src/execution/execution-settings.js';
import { openJobStore } from '../../../src/execution/job-store.js';
import { JobStoreUnavailableError } from '../../../src/execution/job-store-unavailable-error.js';
import { createLogger } from '../../../src/logger.js';
import { waitFor } from '../support.js';

/**
 * What the service needs of a job store, through ExecutionQueue (its only contact with Agenda), on every
 * backend JOBS_URL may name: one suite, each backend (test/execution/job-store-*.test.ts). `newJobsUrl`
 * answers a store no other test sees (a key prefix of its own is given as well).
 */
export interface JobStoreUnderTest {
  newJobsUrl(): Promise<string>;
}

const noWork: JobHandlers = { run: async () => undefined, chunk: async () => true, callback: async () => undefined };

export function jobStoreContract(label: string, setUp: () => JobStoreUnderTest): void {
  describe(`${label} (job store contract)`, () => {
    const cleanup: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const step of cleanup.splice(0).reverse()) await step();
    });

    async function newQueue(
      jobsUrl?: string,
      prefix = `scoring:test:job-store:${randomUUID().slice(0, 8)}:`,
    ): Promise<{ queue: ExecutionQueue; jobsUrl: string; prefix: string }> {
      const url = jobsUrl ?? (await setUp().newJobsUrl());
      const settings = {
        ...loadExecutionSettings(loadConfig(), { JOBS_KEY_PREFIX: prefix }),
        lockLifetimeMs: 2000,
        processEveryMs: 500,
      };
      const queue = new ExecutionQueue(url, settings, createLogger('silent'));
      cleanup.push(() => queue.close());
      return { queue, jobsUrl: url, prefix };
    }

    it('holds what was queued until it runs: runs, chunks, callbacks now and later', async () => {
      const { queue } = await newQueue();
      await queue.enqueueRuns(['r1', 'r2']);
      await queue.enqueueRuns(['r3']);
      await queue.enqueueChunks('batch-1', 10, 4);
      await queue.scheduleCallback('r1', 1, 0);
      await queue.scheduleCallback('r2', 2, 3600);
      expect(await queue.pendingJobs()).toBe(7);
      expect(await queue.pendingJobs([RUN_JOB])).toBe(2);
      expect(await queue.pendingJobs([CHUNK_JOB, CALLBACK_JOB])).toBe(5);
      // The delayed callback is not due yet.
      expect(await queue.dueJobs()).toBe(6);
      const { pending, removed } = await queue.jobsInStore();
      expect(removed).toBe(0);
      expect(
        pending
          .filter((job) => job.name === CHUNK_JOB)
          .map((job) => job.data)
          .sort((a, b) => (a as ChunkJobData).from - (b as ChunkJobData).from),
      ).toEqual([
        { batchId: 'batch-1', from: 0, to: 4 },
        { batchId: 'batch-1', from: 4, to: 8 },
        { batchId: 'batch-1', from: 8, to: 10 },
      ]);
      expect(
        pending
          .filter((job) => job.name === RUN_JOB)
          .map((job) => (job.data as RunJobData).resultIds)
          .sort(),
      ).toEqual([['r1', 'r2'], ['r3']]);
      expect(pending.filter((job) => job.name === CALLBACK_JOB).map((job) => job.data)).toEqual(
        expect.arrayContaining([
          { resultId: 'r1', attempt: 1 },
          { resultId: 'r2', attempt: 2 },
        ]),
      );
    });

    it('runs every job once with its data, and keeps none once they are done', async () => {
      const { queue } = await newQueue();
      const seen: string[] = [];
      await queue.startProcessing({
        run: async (data, keepAlive) => {
          await keepAlive();
          seen.push(`run:${data.resultIds.join(',')}`);
        },
        chunk: async (data) => {
          seen.push(`chunk:${data.from}-${data.to}`);
          return true;
        },
        callback: async (data) => {
          seen.push(`callback:${data.resultId}#${data.attempt}`);
        },
      });
      await queue.enqueueRuns(['a', 'b']);
      await queue.enqueueChunks('batch', 5, 3);
      await queue.scheduleCallback('a', 1, 0);
      await waitFor(async () => (seen.length >= 4 ? true : undefined), 15_000);
      await waitFor(async () => ((await queue.pendingJobs()) === 0 ? true : undefined), 15_000, 100);
      // Nothing runs twice (give a second poll the chance to).
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(seen.sort()).toEqual(['callback:a#1', 'chunk:0-3', 'chunk:3-5', 'run:a,b']);
    });

    it('runs a delayed callback when it is due, not before', async () => {
      const { queue } = await newQueue();
      const ranAt: number[] = [];
      await queue.startProcessing({
        ...noWork,
        callback: async () => {
          ranAt.push(Date.now());
        },
      });
      const queuedAt = Date.now();
      await queue.scheduleCallback('late', 1, 2);
      await waitFor(async () => (ranAt.length === 1 ? true : undefined), 15_000);
      expect(ranAt[0] - queuedAt).toBeGreaterThanOrEqual(1900);
    });

    it('hands an unfinished job of a registered kind back to run again, at once or after the delay it asks for', async () => {
      const { queue } = await newQueue();
      const runs: Array<{ step: number; at: number }> = [];
      queue.registerJobKind<{ step: number }>({
        name: 'test.resumable',
        concurrency: 1,
        run: async (data) => {
          runs.push({ step: data.step, at: Date.now() });
          return runs.length === 1 ? false : runs.length === 2 ? 1500 : true;
        },
      });
      await queue.startProcessing(noWork);
      await queue.enqueue('test.resumable', { step: 1 });
      await waitFor(async () => (runs.length === 3 ? true : undefined), 15_000);
      expect(runs.map((r) => r.step)).toEqual([1, 1, 1]);
      expect(runs[2].at - runs[1].at).toBeGreaterThanOrEqual(1400);
      await waitFor(async () => ((await queue.pendingJobs()) === 0 ? true : undefined), 10_000, 100);
    });

    it('tries a job again while a dependency is unavailable, and drops one that failed for good', async () => {
      const { queue } = await newQueue();
      const tries: string[] = [];
      await queue.startProcessing({
        ...noWork,
        run: async (data) => {
          tries.push(data.resultIds[0]);
          if (data.resultIds[0] === 'flaky' && tries.filter((id) => id === 'flaky').length < 3)
            throw new JobStoreUnavailableError('not now');
          if (data.resultIds[0] === 'broken') throw new Error('a bug');
        },
      });
      await queue.enqueueRuns(['flaky']);
      await queue.enqueueRuns(['broken']);
      await waitFor(async () => (tries.filter((id) => id === 'flaky').length === 3 ? true : undefined), 15_000);
      await waitFor(async () => ((await queue.pendingJobs()) === 0 ? true : undefined), 10_000, 100);
      expect(tries.filter((id) => id === 'broken')).toEqual(['broken']);
    });

    it('removes, when listing, a finished job left in the store, and keeps jobs still to run', async () => {
      const { queue, jobsUrl, prefix } = await newQueue();
      await queue.enqueueRuns(['still-to-run']);
      // What a job-store death between recording a completion and removing the job leaves: unlocked, finished, no next run.
      const store = await openJobStore(jobsUrl, prefix, { onLost() {}, onRestored() {}, onError() {} });
      const { repository } = store.backend;
      const saved = await repository.saveJob(
        { name: RUN_JOB, data: { resultIds: ['left-over'] }, priority: 0, nextRunAt: null, type: 'normal' } as never,
        undefined,
      );
      await repository.saveJobState(
        { ...saved, lockedAt: undefined, lastRunAt: new Date(), lastFinishedAt: new Date(), nextRunAt: null } as never,
        undefined,
      );
      await store.close();
      expect(await queue.pendingJobs()).toBe(2);
      const { pending, removed } = await queue.jobsInStore();
      expect(removed).toBe(1);
      expect(pending).toEqual([{ name: RUN_JOB, data: { resultIds: ['still-to-run'] } }]);
      expect(await queue.pendingJobs()).toBe(1);
    });
  });
}
