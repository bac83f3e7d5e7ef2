import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '../../src/logger.js';
import { ExecutionQueue } from '../../src/execution/execution-queue.js';
import { loadExecutionSettings } from '../../src/execution/execution-settings.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario, slowDoublingScenario } from '../support/scenario-fixtures.js';
import { freePort, PrivateRedis } from '../support/private-redis.js';
import {
  httpRequest,
  startServiceProcess,
  stopAll,
  waitUntilListening,
  type ServiceProcess,
} from '../support/service-process.js';
import { waitFor } from './support.js';

/**
 * An API process (RUN_WORKER=false) and a worker process, as operators run them, on a
 * redis-server of this test's own, which the test kills (SIGKILL) and starts again. The shared
 * Redis is never touched; MySQL is the shared test database.
 */
const ELEMENTS = 400;
const CHUNK = 50;

let t: TestApp;
let alice: TestUser;
let redis: PrivateRedis;
let port: number;
let api: ServiceProcess;
let worker: ServiceProcess;
let queue: ExecutionQueue | undefined;
const processes: ServiceProcess[] = [];
const prefix = `scoring:test:outage:${randomUUID().slice(0, 8)}:`;

const score = (name: string, body: unknown) =>
  httpRequest(port, 'POST', `/api/scenario/code/remote/score?name=${name}`, {
    headers: { 'Score-Token': alice.scoreToken },
    body,
  });
const submitAsync = (name: string, requestId: string, body: unknown) =>
  httpRequest(port, 'POST', `/api/scenario/code/scoreasync/${name}`, {
    headers: { 'Score-Token': alice.scoreToken, 'X-SCE-RequestId': requestId },
    body,
  });
const asyncResult = (name: string, requestId: string) =>
  httpRequest(port, 'GET', `/api/scenario/code/scoreasyncresult/${name}`, {
    headers: { 'Score-Token': alice.scoreToken, 'X-SCE-RequestId': requestId },
  });
const submitBatch = (name: string, parameters: unknown[]) =>
  httpRequest(port, 'POST', '/api/batch/score', {
    headers: { 'Score-Token': alice.scoreToken },
    body: { scenarioName: name, parameters },
  });
const batchStatus = (batchId: string) =>
  httpRequest(port, 'GET', `/api/batch/${batchId}`, { headers: { 'Score-Token': alice.scoreToken } });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function finishedResult(
  name: string,
  requestId: string,
  timeoutMs = 20_000,
): Promise<{ state: string; result: unknown }> {
  return waitFor(
    async () => {
      const answer = await asyncResult(name, requestId);
      return answer.status === 200 ? (answer.body as { state: string; result: unknown }) : undefined;
    },
    timeoutMs,
    100,
  );
}

beforeAll(async () => {
  redis = new PrivateRedis();
  await redis.start();
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'slow', slowDoublingScenario(400_000));
  port = await freePort();
  const env = {
    JOBS_URL: redis.url,
    JOBS_KEY_PREFIX: prefix,
    PORT: String(port),
    RUN_WORKER: 'false',
    JOB_LOCK_LIFETIME_MS: '3000',
    JOB_POLL_MS: '500',
    BATCH_CHUNK_SIZE: String(CHUNK),
    WORKER_CHUNK_CONCURRENCY: '2',
  };
  api = startServiceProcess('src/main.ts', env);
  worker = startServiceProcess('src/worker.ts', env);
  processes.push(api, worker);
  await waitUntilListening(api, port);
  // The worker is up once it has run something.
  expect((await submitAsync('double', 'warm-up', { a: 1 })).status).toBe(202);
  expect(await finishedResult('double', 'warm-up', 30_000)).toMatchObject({
    state: 'SUCCEEDED',
    result: { doubled: 2 },
  });
}, 60_000);

afterAll(async () => {
  await queue?.close();
  await stopAll(processes);
  await redis?.destroy();
  await t?.close();
});

describe('when the job store dies', () => {
  it('keeps the API and the worker up, answers 503 with Retry-After to what needs the job store and 200 to sync scoring, and recovers when it returns', async () => {
    await redis.kill();
    await sleep(2500);
    expect(api.alive()).toBe(true);
    expect(worker.alive()).toBe(true);

    const sync = await score('double', { a: 21 });
    expect(sync.status).toBe(200);
    expect(sync.body).toMatchObject({ state: 'SUCCEEDED', result: { doubled: 42 } });

    const started = Date.now();
    const refusedAsync = await submitAsync('double', 'during-outage', { a: 2 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(refusedAsync.status).toBe(503);
    expect(refusedAsync.headers['content-type']).toMatch(/^application\/json/);
    expect(refusedAsync.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(refusedAsync.body).toMatchObject({ status: 503, code: 'JOB_STORE_UNAVAILABLE' });
    expect(
      await t.services.db('run_results').where({ user_id: alice.id, request_id: 'during-outage' }).count({ n: '*' }),
    ).toEqual([{ n: 0 }]);

    const refusedBatch = await submitBatch('double', [{ a: 1 }, { a: 2 }]);
    expect(refusedBatch.status).toBe(503);
    expect(refusedBatch.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(refusedBatch.body).toMatchObject({ status: 503, code: 'JOB_STORE_UNAVAILABLE' });

    const ready = await httpRequest(port, 'GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(ready.body).toMatchObject({ status: 'unavailable', checks: { database: 'ok' } });
    expect(ready.body.checks.jobStore).toMatch(/^unavailable: /);
    expect((await httpRequest(port, 'GET', '/health/live')).status).toBe(200);

    await redis.start();
    await waitFor(
      async () => ((await httpRequest(port, 'GET', '/health/ready')).status === 200 ? true : undefined),
      10_000,
      100,
    );
    // The same request id, refused during the outage, is accepted now and runs: no restart needed.
    const accepted = await waitFor(
      async () => {
        const answer = await submitAsync('double', 'during-outage', { a: 2 });
        return answer.status === 503 ? undefined : answer;
      },
      10_000,
      200,
    );
    expect(accepted.status).toBe(202);
    expect(await finishedResult('double', 'during-outage')).toMatchObject({
      state: 'SUCCEEDED',
      result: { doubled: 4 },
    });
    expect((await submitBatch('double', [{ a: 1 }])).status).toBe(202);
    expect(api.alive() && worker.alive()).toBe(true);
  }, 50_000);

  it('finishes the work accepted before the outage exactly once after the job store returns', async () => {
    await redis.start();
    const parameters = Array.from({ length: ELEMENTS }, (_, i) => ({ a: i }));
    const submitted = await submitBatch('slow', parameters);
    expect(submitted.status).toBe(202);
    const batchId: string = submitted.body.batchTaskId;
    const requestIds = ['before-1', 'before-2', 'before-3'];
    for (const [i, requestId] of requestIds.entries())
      expect((await submitAsync('slow', requestId, { a: 100 + i })).status).toBe(202);
    await waitFor(
      async () => {
        const [row] = (await t.services
          .db('run_results')
          .where({ batch_id: batchId, state: 'SUCCEEDED' })
          .count({ n: '*' })) as Array<{ n: number }>;
        return Number(row.n) >= CHUNK ? true : undefined;
      },
      30_000,
      20,
    );

    await redis.kill();
    const [{ n: doneAtKill }] = (await t.services
      .db('run_results')
      .where({ batch_id: batchId, state: 'SUCCEEDED' })
      .count({ n: '*' })) as Array<{ n: number }>;
    expect(Number(doneAtKill)).toBeLessThan(ELEMENTS);
    await sleep(3000);
    expect(api.alive() && worker.alive()).toBe(true);
    await redis.start();

    const status = await waitFor(
      async () => {
        const answer = await batchStatus(batchId);
        return answer.body.state === 'FINISHED' ? answer.body : undefined;
      },
      40_000,
      200,
    );
    expect(status).toMatchObject({ total: ELEMENTS, completed: ELEMENTS, failed: 0 });
    expect(new Set(status.resultsIds).size).toBe(ELEMENTS);
    for (const [i, requestId] of requestIds.entries()) {
      expect(await finishedResult('slow', requestId)).toMatchObject({
        state: 'SUCCEEDED',
        result: { doubled: 2 * (100 + i) },
      });
    }

    // Jobs whose completion could not be recorded during the outage run again once their lock
    // expires, find nothing left to do and leave: the store ends empty, the results unchanged.
    queue = new ExecutionQueue(
      redis.url,
      loadExecutionSettings(t.config, { JOBS_KEY_PREFIX: prefix }),
      createLogger('silent'),
    );
    await waitFor(async () => ((await queue!.pendingJobs()) === 0 ? true : undefined), 20_000, 200);
    const rows = (await t.services
      .db('run_results')
      .where({ batch_id: batchId })
      .orderBy('element_index')
      .select('id', 'element_index', 'state', 'result')) as Array<{
      id: string;
      element_index: number;
      state: string;
      result: string;
    }>;
    expect(rows).toHaveLength(ELEMENTS);
    expect(
      rows.every(
        (row, i) => row.element_index === i && row.state === 'SUCCEEDED' && JSON.parse(row.result).doubled === 2 * i,
      ),
    ).toBe(true);
    expect(rows.map((row) => row.id)).toEqual(status.resultsIds);
    expect(
      await t.services
        .db('run_results')
        .where({ user_id: alice.id })
        .whereIn('request_id', requestIds)
        .count({ n: '*' }),
    ).toEqual([{ n: requestIds.length }]);
    expect(api.alive() && worker.alive()).toBe(true);
  }, 55_000);
});
