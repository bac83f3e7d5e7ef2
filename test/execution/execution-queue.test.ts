import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/config/config.js';
import { ExecutionQueue, RUN_JOB } from '../../src/execution/execution-queue.js';
import { loadExecutionSettings } from '../../src/execution/execution-settings.js';
import { openJobStore } from '../../src/execution/job-store.js';
import { JobStoreUnavailableError } from '../../src/execution/job-store-unavailable-error.js';
import { createLogger } from '../../src/logger.js';
import { PrivateRedis } from '../support/private-redis.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { waitFor } from './support.js';

const cleanup: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A queue on a redis-server of this test's own (started), under a prefix of its own. */
async function queueOnPrivateRedis(): Promise<{ queue: ExecutionQueue; redis: PrivateRedis; prefix: string }> {
  applyTestEnvironment();
  const redis = new PrivateRedis();
  await redis.start();
  cleanup.push(() => redis.destroy());
  const prefix = `scoring:test:queue:${randomUUID().slice(0, 8)}:`;
  const settings = {
    ...loadExecutionSettings(loadConfig(), { JOBS_KEY_PREFIX: prefix }),
    lockLifetimeMs: 2000,
    processEveryMs: 500,
  };
  const queue = new ExecutionQueue(redis.url, settings, createLogger('silent'));
  cleanup.push(() => queue.close());
  return { queue, redis, prefix };
}

it('refuses work at once while the job store has never been reachable, and takes it as soon as the store is up', async () => {
  const { queue, redis } = await queueOnPrivateRedis();
  await redis.kill();
  const started = Date.now();
  await expect(queue.enqueueRuns([randomUUID()])).rejects.toBeInstanceOf(JobStoreUnavailableError);
  await expect(queue.enqueueChunks(randomUUID(), 10, 5)).rejects.toThrow(
    /Redis at 127\.0\.0\.1:\d+ is unreachable: connect ECONNREFUSED/,
  );
  expect(Date.now() - started).toBeLessThan(3000);

  await redis.start();
  await queue.enqueueRuns([randomUUID()]);
  await queue.enqueueChunks(randomUUID(), 10, 5);
  expect(await queue.pendingJobs()).toBe(3);
});

it('removes, after the job store returns, a finished job that its outage left behind', async () => {
  const { queue, redis, prefix } = await queueOnPrivateRedis();
  await queue.startProcessing({ run: async () => undefined, chunk: async () => true, callback: async () => undefined });
  // What a job-store death between recording a completion and removing the job leaves: an unlocked job,
  // finished, with no next run (Agenda never runs it again).
  const store = await openJobStore(redis.url, prefix, { onLost() {}, onRestored() {}, onError() {} });
  const { repository } = store.backend;
  const saved = await repository.saveJob(
    { name: RUN_JOB, data: { resultIds: [] }, priority: 0, nextRunAt: null, type: 'normal' } as never,
    undefined,
  );
  await repository.saveJobState(
    { ...saved, lockedAt: undefined, lastRunAt: new Date(), lastFinishedAt: new Date(), nextRunAt: null } as never,
    undefined,
  );
  await store.close();
  expect(await queue.pendingJobs()).toBe(1);

  await redis.kill();
  await redis.start();
  await waitFor(async () => ((await queue.pendingJobs().catch(() => -1)) === 0 ? true : undefined), 10_000, 100);
});
