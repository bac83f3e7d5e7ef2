import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { sampleValue } from '../support/prometheus-text.js';
import { freePort } from '../support/private-redis.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import {
  httpRequest,
  startServiceProcess,
  stopAll,
  waitUntilListening,
  type ServiceProcess,
} from '../support/service-process.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * The processes as operators run them: an API (RUN_WORKER=false) and a worker, each serving its own
 * metrics on a port of its own (METRICS_PORT, WORKER_METRICS_PORT), bound to 127.0.0.1.
 */
const TOKEN = 'metrics-token-for-this-test';
let t: TestApp;
let alice: TestUser;
let apiPort: number;
let apiMetricsPort: number;
let workerMetricsPort: number;
const processes: ServiceProcess[] = [];

const submitAsync = (a: number) =>
  httpRequest(apiPort, 'POST', '/api/scenario/code/scoreasync/double', {
    headers: { 'Score-Token': alice.scoreToken, 'X-SCE-RequestId': randomUUID() },
    body: { a },
  });
const finished = (requestId: string) =>
  waitFor(
    async () => {
      const answer = await httpRequest(apiPort, 'GET', '/api/scenario/code/scoreasyncresult/double', {
        headers: { 'Score-Token': alice.scoreToken, 'X-SCE-RequestId': requestId },
      });
      return answer.status === 200 ? answer : undefined;
    },
    20_000,
    100,
  );
const scrape = (port: number, token?: string) =>
  httpRequest(port, 'GET', '/metrics', { headers: token ? { Authorization: `Bearer ${token}` } : {} });
const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

beforeAll(async () => {
  isolateJobStore('metrics-processes');
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  [apiPort, apiMetricsPort, workerMetricsPort] = [await freePort(), await freePort(), await freePort()];
  const metrics = {
    METRICS_ENABLED: 'true',
    METRICS_PORT: String(apiMetricsPort),
    WORKER_METRICS_PORT: String(workerMetricsPort),
    METRICS_TOKEN: TOKEN,
  };
  const api = startServiceProcess('src/main.ts', { PORT: String(apiPort), RUN_WORKER: 'false', ...metrics });
  const worker = startServiceProcess('src/worker.ts', metrics);
  processes.push(api, worker);
  await waitUntilListening(api, apiPort);
  await waitFor(
    () =>
      scrape(workerMetricsPort, TOKEN).then(
        (answer) => (answer.status === 200 ? true : undefined),
        () => undefined,
      ),
    30_000,
    100,
  );
}, 60_000);
afterAll(async () => {
  await stopAll(processes);
  await t.close();
});

it('the API serves its metrics on METRICS_PORT behind METRICS_TOKEN, never on its own port', async () => {
  expect((await scrape(apiMetricsPort)).status).toBe(401);
  expect((await scrape(apiMetricsPort, 'wrong')).status).toBe(401);
  const score = await httpRequest(apiPort, 'POST', '/api/scenario/code/remote/score?name=double', {
    headers: { 'Score-Token': alice.scoreToken },
    body: { a: 2 },
  });
  expect(score.status).toBe(200);
  const scraped = await scrape(apiMetricsPort, TOKEN);
  expect(scraped.status).toBe(200);
  expect(
    sampleValue(scraped.text, 'scoring_runs_total', {
      owner: alice.username,
      scenario: 'double',
      version: '1',
      mode: 'sync',
      outcome: 'succeeded',
    }),
  ).toBe(1);
  const onApiPort = await httpRequest(apiPort, 'GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(onApiPort.status).toBe(404);
}, 30_000);

it('a worker process serves the metrics of the runs it made on WORKER_METRICS_PORT', async () => {
  const submitted = await submitAsync(3);
  expect(submitted.status).toBe(202);
  const labels = { owner: alice.username, scenario: 'double', version: '1', mode: 'async', outcome: 'succeeded' };
  const text = await waitFor(
    async () => {
      const scraped = await scrape(workerMetricsPort, TOKEN);
      return sampleValue(scraped.text, 'scoring_runs_total', labels) === 1 ? scraped.text : undefined;
    },
    20_000,
    100,
  );
  expect(sampleValue(text, 'scoring_job_queue_depth')).toBeGreaterThanOrEqual(0);
  // The API made no async run: it reports none.
  expect(sampleValue((await scrape(apiMetricsPort, TOKEN)).text, 'scoring_runs_total', labels)).toBeUndefined();
}, 30_000);

it('a process without METRICS_ENABLED opens no metrics listener', async () => {
  await stopAll(processes.splice(1));
  const port = await freePort();
  const worker = startServiceProcess('src/worker.ts', { WORKER_METRICS_PORT: String(port) });
  processes.push(worker);
  // The only worker now: once it has run an async run, it is up.
  const submitted = await submitAsync(4);
  expect((await finished(submitted.body.requestId)).body.result).toEqual({ doubled: 8 });
  expect(await refusesConnections(port)).toBe(true);
}, 40_000);
