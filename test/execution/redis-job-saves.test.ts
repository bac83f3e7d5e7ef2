import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RedisBackend } from '@agendajs/redis-backend';
import type { JobParameters } from 'agenda';
import { Redis } from 'ioredis';
import { pipelineNewJobSaves, REDIS_BACKEND_VERSION_RELIED_ON } from '../../src/execution/redis-job-saves.js';
import { applyTestEnvironment } from '../support/test-environment.js';

/**
 * The contract of src/execution/redis-job-saves.ts with the installed @agendajs/redis-backend: a new
 * job saved in one pipeline is stored exactly as the backend stores it (hash, sets, schedule), and
 * every other kind of save is the backend's own. An upgrade that changes the layout fails here.
 */
let redis: Redis;
const prefix = `scoring:test:job-saves:${randomUUID().slice(0, 8)}:`;
const backendPrefix = `${prefix}backend:`;
const pipelinedPrefix = `${prefix}pipelined:`;

beforeAll(async () => {
  applyTestEnvironment();
  redis = new Redis(process.env.JOBS_URL as string);
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

function repositories() {
  const plain = new RedisBackend({ redis, keyPrefix: backendPrefix }).repository;
  const pipelined = new RedisBackend({ redis, keyPrefix: pipelinedPrefix }).repository;
  pipelineNewJobSaves(pipelined);
  return { plain, pipelined };
}

/** What the store holds for a job, with the fields that differ by nature (id, clock) left out. */
async function stored(keyPrefix: string, id: string, name: string) {
  const { id: _id, createdAt: _created, updatedAt: _updated, ...hash } = await redis.hgetall(`${keyPrefix}job:${id}`);
  return {
    hash,
    inAll: await redis.sismember(`${keyPrefix}jobs:all`, id),
    inName: await redis.sismember(`${keyPrefix}jobs:by_name:${name}`, id),
    score: await redis.zscore(`${keyPrefix}jobs:by_next_run_at`, id),
  };
}

describe('pipelined job saves', () => {
  it('are written against the exact @agendajs/redis-backend version pinned in package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies['@agendajs/redis-backend']).toBe(REDIS_BACKEND_VERSION_RELIED_ON);
    const installed = JSON.parse(
      readFileSync(new URL('../../node_modules/@agendajs/redis-backend/package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(installed.version).toBe(REDIS_BACKEND_VERSION_RELIED_ON);
  });

  it('store a new job exactly as the backend does, and answer it the same way', async () => {
    const { plain, pipelined } = repositories();
    const job: JobParameters<{ resultIds: string[] }> = {
      name: 'contract.run',
      priority: 5,
      nextRunAt: new Date(Date.now() + 1234),
      type: 'normal',
      data: { resultIds: ['a', 'b'] },
    };
    const fromBackend = await plain.saveJob({ ...job }, { lastModifiedBy: 'worker-1' });
    const fromPipeline = await pipelined.saveJob({ ...job }, { lastModifiedBy: 'worker-1' });
    expect(fromPipeline._id).toBeDefined();
    expect({ ...fromPipeline, _id: undefined }).toEqual({ ...fromBackend, _id: undefined });
    expect(await stored(pipelinedPrefix, String(fromPipeline._id), job.name)).toEqual(
      await stored(backendPrefix, String(fromBackend._id), job.name),
    );
    expect(await stored(pipelinedPrefix, String(fromPipeline._id), job.name)).toMatchObject({ inAll: 1, inName: 1 });
    // The backend finds and locks it like any other job.
    const locked = await pipelined.getNextJobToRun(
      job.name,
      new Date(Date.now() + 60_000),
      new Date(Date.now() - 60_000),
      new Date(),
      {},
    );
    expect(locked?._id).toEqual(fromPipeline._id);
  });

  it("leave updates, single jobs and unique jobs to the backend's own save", async () => {
    const { pipelined } = repositories();
    const single = await pipelined.saveJob(
      { name: 'contract.single', priority: 0, nextRunAt: new Date(), type: 'single', data: {} },
      undefined,
    );
    const again = await pipelined.saveJob(
      { name: 'contract.single', priority: 0, nextRunAt: new Date(), type: 'single', data: { n: 2 } },
      undefined,
    );
    expect(again._id).toEqual(single._id);
    const unique = {
      name: 'contract.unique',
      priority: 0,
      nextRunAt: new Date(),
      type: 'normal',
      data: { key: 'k' },
      unique: { 'data.key': 'k' },
    } as JobParameters;
    const first = await pipelined.saveJob({ ...unique }, undefined);
    const second = await pipelined.saveJob({ ...unique }, undefined);
    expect(second._id).toEqual(first._id);
    const updated = await pipelined.saveJob({ ...first, priority: 7 }, undefined);
    expect(updated).toMatchObject({ _id: first._id, priority: 7 });
  });
});
