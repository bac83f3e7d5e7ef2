import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Job } from 'agenda';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/config.js';
import { ExecutionQueue, type JobHandlers } from '../../src/execution/execution-queue.js';
import { loadExecutionSettings } from '../../src/execution/execution-settings.js';
import { createLogger } from '../../src/logger.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { waitFor } from './support.js';

/**
 * Issue 27, problem 6: "finished jobs never stay in the job store". Agenda records a job's completion
 * and only then removes it, two steps apart: a worker that died or stopped between them left finished
 * jobs in the store (26 and 24 seen), removed only at the next reconnection or sweep. A job is now
 * removed as its handler ends, before Agenda records anything. Against the real Redis job store
 * (JOBS_URL), each test under a key prefix of its own, read with a plain Redis client.
 */
const cleanup: Array<() => Promise<void>> = [];
let jobsUrl: string;

beforeAll(() => {
  applyTestEnvironment();
  jobsUrl = process.env.JOBS_URL as string;
});

afterEach(async () => {
  jest.restoreAllMocks();
  for (const step of cleanup.splice(0).reverse()) await step();
});

const handlers = (overrides: Partial<JobHandlers> = {}): JobHandlers => ({
  run: async () => undefined,
  chunk: async () => true,
  callback: async () => undefined,
  ...overrides,
});

function newQueue(): { queue: ExecutionQueue; jobsInRedis: () => Promise<number> } {
  const prefix = `scoring:test:finished-jobs:${randomUUID().slice(0, 8)}:`;
  const settings = {
    ...loadExecutionSettings(loadConfig(), { JOBS_KEY_PREFIX: prefix }),
    lockLifetimeMs: 2000,
    processEveryMs: 200,
  };
  const queue = new ExecutionQueue(jobsUrl, settings, createLogger('silent'));
  const redis = new Redis(jobsUrl);
  cleanup.push(async () => {
    await queue.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  // Every job hash Agenda's Redis backend keeps, whatever state it is in (and whether or not it still has a name).
  const jobsInRedis = async () => (await redis.keys(`${prefix}job:*`)).length;
  return { queue, jobsInRedis };
}

describe('finished jobs in the job store', () => {
  it('removes a job as its handler ends: a worker dying before Agenda removes it leaves nothing behind', async () => {
    const { queue, jobsInRedis } = newQueue();
    // The worker "dies" when Agenda, having recorded the completion, goes to remove the job.
    jest.spyOn(Job.prototype, 'remove').mockImplementation(() => new Promise<number>(() => undefined));
    let ran = 0;
    await queue.startProcessing(
      handlers({
        run: async () => {
          ran += 1;
        },
      }),
    );
    for (let k = 0; k < 5; k += 1) await queue.enqueueRuns([randomUUID()]);
    await waitFor(async () => (ran === 5 ? true : undefined), 10_000);
    await waitFor(async () => ((await jobsInRedis()) === 0 ? true : undefined), 2000, 20);
  });

  it('leaves no job behind when the worker stops right after its jobs end', async () => {
    const { queue, jobsInRedis } = newQueue();
    let running = 0;
    let ended = 0;
    await queue.startProcessing(
      handlers({
        run: async () => {
          running += 1;
          await new Promise((resolve) => setTimeout(resolve, 100));
          ended += 1;
        },
      }),
    );
    for (let k = 0; k < 4; k += 1) await queue.enqueueRuns([randomUUID()]);
    await waitFor(async () => (running === 4 ? true : undefined), 10_000, 5);
    await queue.close();
    expect(ended).toBe(4);
    expect(await jobsInRedis()).toBe(0);
  });

  it('removes a job that failed for good at once, and keeps one that waits for a retry', async () => {
    const { queue, jobsInRedis } = newQueue();
    const failures: string[] = [];
    await queue.startProcessing(
      handlers({
        run: async ({ resultIds }) => {
          failures.push(resultIds[0]);
          if (resultIds[0] === 'outage') throw Object.assign(new Error('connect ECONNREFUSED'), { fatal: true });
          throw new Error('a fault of the handler');
        },
      }),
    );
    await queue.enqueueRuns(['fault']);
    await waitFor(async () => (failures.includes('fault') ? true : undefined), 10_000, 5);
    await waitFor(async () => ((await jobsInRedis()) === 0 ? true : undefined), 2000, 20);
    // Stays gone: Agenda's own bookkeeping after the failure does not bring it back.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await jobsInRedis()).toBe(0);

    await queue.enqueueRuns(['outage']);
    await waitFor(async () => (failures.includes('outage') ? true : undefined), 10_000, 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await jobsInRedis()).toBe(1);
  });
});
