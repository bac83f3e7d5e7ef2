import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario, slowDoublingScenario } from '../support/scenario-fixtures.js';
import { freePort } from '../support/private-redis.js';
import {
  httpRequest,
  startServiceProcess,
  stopAll,
  waitUntilListening,
  type ServiceProcess,
} from '../support/service-process.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../execution/support.js';
import { applyTestEnvironment } from '../support/test-environment.js';

/**
 * An API process (RUN_WORKER=false) and a worker process reach MySQL through a TCP proxy that the
 * test cuts (every connection destroyed, new ones refused) and restores. The shared MariaDB is
 * never touched; the test itself reads and arranges data over a direct connection.
 */
const ELEMENTS = 300;
const CHUNK = 50;

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let proxy: TcpProxy;
let port: number;
let api: ServiceProcess;
let worker: ServiceProcess;
let scenarioId: number;
const processes: ServiceProcess[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const scoreAs = (user: TestUser, name: string, body: unknown) =>
  httpRequest(port, 'POST', `/api/scenario/code/remote/score?name=${name}`, {
    headers: { 'Score-Token': user.scoreToken },
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
const openScenario = () =>
  httpRequest(port, 'GET', `/api/scenario/open/${scenarioId}?context=${encodeURIComponent(alice.context())}`, {
    headers: { Authorization: `Bearer ${alice.accessToken}` },
  });

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

function expectUnavailable(answer: { status: number; headers: Record<string, unknown>; body: any }): void {
  expect(answer.status).toBe(503);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
  expect(answer.body).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE' });
}

beforeAll(async () => {
  applyTestEnvironment(); // DATABASE_URL defaults to the test database when the caller did not set it
  const databaseUrl = new URL(process.env.DATABASE_URL as string);
  proxy = new TcpProxy(databaseUrl.hostname, Number(databaseUrl.port || 3306));
  await proxy.start();
  t = await createTestApp();
  alice = await t.newUser();
  bob = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'slow', slowDoublingScenario(400_000));
  await deployScenario(t.services.db, bob.id, 'double', doublingScenario());
  scenarioId = (
    (await t.services.db('scenarios').where({ owner_id: alice.id, name: 'double' }).first('id')) as { id: number }
  ).id;
  port = await freePort();
  const env = {
    DATABASE_URL: proxy.rewrite(databaseUrl.toString()),
    JOBS_KEY_PREFIX: `scoring:test:db-outage:${randomUUID().slice(0, 8)}:`,
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
  expect((await submitAsync('double', 'warm-up', { a: 1 })).status).toBe(202);
  expect(await finishedResult('double', 'warm-up', 30_000)).toMatchObject({
    state: 'SUCCEEDED',
    result: { doubled: 2 },
  });
}, 60_000);

afterAll(async () => {
  await stopAll(processes);
  await proxy?.close();
  await t?.close();
});

describe('when MySQL goes away', () => {
  it('keeps the API and the worker up, answers 503 with Retry-After to what needs MySQL, and recovers when it returns', async () => {
    // alice has scored on this API process: her token, deployed version and recording settings are in its caches.
    expect((await scoreAs(alice, 'double', { a: 3 })).status).toBe(200);
    await proxy.cut();
    // Longer than the deployed-version cache's freshness (1 s) and the score-token cache's (5 s): both are stale now.
    await sleep(6000);
    expect(api.alive()).toBe(true);
    expect(worker.alive()).toBe(true);

    // Sync scoring of what the process knows goes on from its stale caches (SCENARIO_CACHE_STALE_SECONDS,
    // SCORE_TOKEN_STALE_SECONDS: 60 s); before, it answered 503 once its 1 s cache expired.
    for (const a of [5, 6, 7]) {
      const stale = await scoreAs(alice, 'double', { a });
      expect(stale.status).toBe(200);
      expect(stale.body).toMatchObject({ state: 'SUCCEEDED', result: { doubled: 2 * a } });
    }
    // What it has not seen needs MySQL: bob's token.
    expectUnavailable(await scoreAs(bob, 'double', { a: 1 }));
    expectUnavailable(await submitAsync('double', 'during-outage', { a: 2 }));
    expectUnavailable(await submitBatch('double', [{ a: 1 }]));
    expectUnavailable(await asyncResult('double', 'warm-up'));
    expectUnavailable(await openScenario());

    const ready = await httpRequest(port, 'GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(ready.body).toMatchObject({ status: 'unavailable', checks: { jobStore: 'ok' } });
    expect(ready.body.checks.database).toMatch(/^unavailable: /);
    expect((await httpRequest(port, 'GET', '/health/live')).status).toBe(200);

    await proxy.restore();
    await waitFor(
      async () => ((await httpRequest(port, 'GET', '/health/ready')).status === 200 ? true : undefined),
      10_000,
      100,
    );
    const sync = await scoreAs(bob, 'double', { a: 21 });
    expect(sync.status).toBe(200);
    expect(sync.body).toMatchObject({ state: 'SUCCEEDED', result: { doubled: 42 } });
    expect((await openScenario()).status).toBe(200);
    // Nothing was stored for the refused submission: its request id is free.
    expect((await submitAsync('double', 'during-outage', { a: 2 })).status).toBe(202);
    expect(await finishedResult('double', 'during-outage')).toMatchObject({
      state: 'SUCCEEDED',
      result: { doubled: 4 },
    });
    expect(api.alive() && worker.alive()).toBe(true);
  }, 50_000);

  it('finishes the work accepted before the outage exactly once after MySQL returns', async () => {
    await proxy.restore();
    const parameters = Array.from({ length: ELEMENTS }, (_, i) => ({ a: i }));
    const submitted = await submitBatch('slow', parameters);
    expect(submitted.status).toBe(202);
    const batchId: string = submitted.body.batchTaskId;
    const requestIds = ['before-1', 'before-2'];
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

    await proxy.cut();
    const [{ n: doneAtCut }] = (await t.services
      .db('run_results')
      .where({ batch_id: batchId, state: 'SUCCEEDED' })
      .count({ n: '*' })) as Array<{ n: number }>;
    expect(Number(doneAtCut)).toBeLessThan(ELEMENTS);
    await sleep(3000);
    expect(api.alive() && worker.alive()).toBe(true);
    await proxy.restore();

    const status = await waitFor(
      async () => {
        const answer = await batchStatus(batchId);
        return answer.status === 200 && answer.body.state === 'FINISHED' ? answer.body : undefined;
      },
      40_000,
      200,
    );
    expect(status).toMatchObject({ total: ELEMENTS, completed: ELEMENTS, failed: 0 });
    expect(new Set(status.resultsIds).size).toBe(ELEMENTS);
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
    for (const [i, requestId] of requestIds.entries()) {
      expect(await finishedResult('slow', requestId)).toMatchObject({
        state: 'SUCCEEDED',
        result: { doubled: 2 * (100 + i) },
      });
    }
    expect(api.alive() && worker.alive()).toBe(true);
  }, 55_000);
});
