import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario, slowDoublingScenario } from '../support/scenario-fixtures.js';
import { freePort, PrivateRedis } from '../support/private-redis.js';
import { sampleValue } from '../support/prometheus-text.js';
import {
  httpRequest,
  startServiceProcess,
  stopAll,
  waitUntilListening,
  type ServiceProcess,
} from '../support/service-process.js';
import { waitFor } from './support.js';

/**
 * Issue 27, problems 5 and 6, with the processes operators run and the default recovery settings (lock
 * lifetime 10 s, sweeps every 5 s of work 10 s old): a worker killed with SIGKILL mid-batch, an API
 * killed with SIGKILL under async submissions, and a job store that comes back empty. Every accepted
 * run must end, once, within 30 s. The job store is a redis-server of this test's own.
 */
const RECOVERY_BOUND_MS = 30_000;

let t: TestApp;
let alice: TestUser;
let redis: PrivateRedis;
const processes: ServiceProcess[] = [];
const prefix = `scoring:test:recovery:${randomUUID().slice(0, 8)}:`;
let receiver: http.Server;
let receiverUrl: string;
/** Statuses the receiver answers, per X-SCE-RequestId (200 otherwise): other files' recovered callbacks may reach it too. */
const receiverStatuses = new Map<string, number[]>();
const received: string[] = [];

// The service's defaults, whatever the suite set for its other files (test/support/global-setup.js).
const RECOVERY_DEFAULTS = {
  JOB_LOCK_LIFETIME_MS: '10000',
  JOB_POLL_MS: '5000',
  STALLED_WORK_AFTER_SECONDS: '10',
  STALLED_WORK_SWEEP_SECONDS: '5',
};
const env = (extra: Record<string, string> = {}) => ({
  JOBS_URL: redis.url,
  JOBS_KEY_PREFIX: prefix,
  RUN_WORKER: 'false',
  OUTBOUND_ALLOW_LIST: '127.0.0.1',
  ...RECOVERY_DEFAULTS,
  ...extra,
});

async function startApi(): Promise<{ api: ServiceProcess; port: number }> {
  const port = await freePort();
  const api = startServiceProcess('src/main.ts', env({ PORT: String(port) }));
  processes.push(api);
  await waitUntilListening(api, port);
  return { api, port };
}

function startWorker(extra: Record<string, string> = {}): ServiceProcess {
  const worker = startServiceProcess('src/worker.ts', env(extra));
  processes.push(worker);
  return worker;
}

async function kill9(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGKILL');
  await service.exited;
}

const runStates = async (requestIds: string[]) =>
  (await t.services
    .db('run_results')
    .where({ user_id: alice.id })
    .whereIn('request_id', requestIds)
    .select('request_id', 'state')) as Array<{ request_id: string; state: string }>;

beforeAll(async () => {
  redis = new PrivateRedis();
  await redis.start();
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'slow', slowDoublingScenario(1_300_000));
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const requestId = String(req.headers['x-sce-requestid']);
      received.push(requestId);
      res.writeHead(receiverStatuses.get(requestId)?.shift() ?? 200).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}, 60_000);

afterAll(async () => {
  await stopAll(processes);
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await redis?.destroy();
  await t?.close();
});

describe('recovery within 30 s', () => {
  it('finishes a batch and async runs exactly once after their worker is killed with SIGKILL', async () => {
    const { port } = await startApi();
    const first = startWorker({ WORKER_CHUNK_CONCURRENCY: '2' });
    const submitted = await httpRequest(port, 'POST', '/api/batch/score', {
      headers: { 'Score-Token': alice.scoreToken },
      body: { scenarioName: 'slow', parameters: Array.from({ length: 600 }, (_, a) => ({ a })) },
    });
    expect(submitted.status).toBe(202);
    const batchId = submitted.body.batchTaskId as string;
    const asyncIds = Array.from({ length: 20 }, (_, k) => `crash-${k}-${randomUUID()}`);
    for (const id of asyncIds)
      expect(
        (
          await httpRequest(port, 'POST', '/api/scenario/code/scoreasync/slow', {
            headers: { 'Score-Token': alice.scoreToken, 'X-SCE-RequestId': id },
            body: { a: 1 },
          })
        ).status,
      ).toBe(202);
    await waitFor(
      async () =>
        ((await t.services.db('run_results').where({ batch_id: batchId }).count({ n: '*' })) as Array<{ n: number }>)[0]
          .n > 0
          ? true
          : undefined,
      60_000,
      50,
    );
    await kill9(first);
    const killedAt = Date.now();
    startWorker();
    await waitFor(
      async () =>
        ((await t.services.db('batches').where({ id: batchId }).first('finished_at')) as { finished_at: Date | null })
          .finished_at
          ? true
          : undefined,
      RECOVERY_BOUND_MS,
      100,
    );
    await waitFor(
      async () => ((await runStates(asyncIds)).every((run) => run.state === 'SUCCEEDED') ? true : undefined),
      RECOVERY_BOUND_MS - (Date.now() - killedAt),
      100,
    );
    const elements = (await t.services
      .db('run_results')
      .where({ batch_id: batchId })
      .select('element_index', 'state')) as Array<{ element_index: number; state: string }>;
    expect(elements).toHaveLength(600);
    expect(new Set(elements.map((element) => element.element_index)).size).toBe(600);
  }, 120_000);

  it('finishes every run an API killed with SIGKILL had committed, accepted or not', async () => {
    const { api, port } = await startApi();
    const ids: string[] = [];
    let stop = false;
    const loops = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const id = `api-crash-${randomUUID()}`;
        ids.push(id);
        await httpRequest(port, 'POST', '/api/scenario/code/scoreasync/double', {
          headers: { 'Score-Token': alice.scoreToken, 'X-SCE-RequestId': id },
          body: { a: 2 },
          timeoutMs: 5000,
        }).catch(() => undefined);
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await kill9(api);
    stop = true;
    await Promise.all(loops);
    // Every run the dead API committed (with a 202 or not), whether its job was saved or not.
    const committed = await runStates(ids);
    expect(committed.length).toBeGreaterThan(20);
    await waitFor(
      async () => ((await runStates(ids)).every((run) => run.state === 'SUCCEEDED') ? true : undefined),
      RECOVERY_BOUND_MS,
      100,
    );
    expect((await runStates(ids)).length).toBe(committed.length);
  }, 120_000);

  it('delivers pending callbacks and runs queued work after the job store comes back empty, and counts the recovery in the metrics', async () => {
    // No process of the tests before: the one worker of this test is the only one to recover anything.
    await stopAll(processes);
    const { port } = await startApi();
    const worker = startWorker();
    // The first attempt is refused (500): the retry is a job scheduled an hour later.
    const callbackId = `callback-${randomUUID()}`;
    receiverStatuses.set(callbackId, [500]);
    const headers = {
      'Score-Token': alice.scoreToken,
      'X-SCE-RequestId': callbackId,
      'X-SCE-CallbackUrl': receiverUrl,
      'X-SCE-CallbackRetryCount': '3',
      'X-SCE-CallbackRetryDelay': '3600',
    };
    expect(
      (await httpRequest(port, 'POST', '/api/scenario/code/scoreasync/double', { headers, body: { a: 3 } })).status,
    ).toBe(202);
    await waitFor(async () => (received.includes(callbackId) ? true : undefined), 20_000, 50);
    // Killed once the refused attempt is recorded (killed between the answer and its record, the worker
    // never made attempt 1, and the recovered attempt 1 would be the one answered 200).
    await waitFor(
      async () => {
        const [row] = (await t.services
          .db('run_results as r')
          .join('callback_attempts as a', 'a.result_id', 'r.id')
          .where({ 'r.user_id': alice.id, 'r.request_id': callbackId })
          .count({ n: '*' })) as Array<{ n: number | string }>;
        return Number(row.n) > 0 ? true : undefined;
      },
      10_000,
      10,
    );
    await kill9(worker);
    // Queued with no worker to run them: their jobs wait in the store.
    const queuedIds = Array.from({ length: 5 }, (_, k) => `queued-${k}-${randomUUID()}`);
    for (const id of queuedIds)
      expect(
        (
          await httpRequest(port, 'POST', '/api/scenario/code/scoreasync/double', {
            headers: { 'Score-Token': alice.scoreToken, 'X-SCE-RequestId': id },
            body: { a: 4 },
          })
        ).status,
      ).toBe(202);
    await redis.killAndWipe();
    await redis.start();
    const metricsPort = await freePort();
    startWorker({ METRICS_ENABLED: 'true', WORKER_METRICS_PORT: String(metricsPort) });
    const restartedAt = Date.now();
    const callback = await waitFor(
      async () => {
        const row = (await t.services
          .db('run_results')
          .where({ user_id: alice.id, request_id: callbackId })
          .first('id', 'callback_state')) as { id: string; callback_state: string };
        return row.callback_state === 'DELIVERED' ? row : undefined;
      },
      RECOVERY_BOUND_MS,
      100,
    );
    await waitFor(
      async () => ((await runStates(queuedIds)).every((run) => run.state === 'SUCCEEDED') ? true : undefined),
      RECOVERY_BOUND_MS - (Date.now() - restartedAt),
      100,
    );
    const attempts = (await t.services
      .db('callback_attempts')
      .where({ result_id: callback.id })
      .orderBy('id')
      .select('attempt', 'http_status')) as Array<{ attempt: number; http_status: number }>;
    expect(attempts).toEqual([
      { attempt: 1, http_status: 500 },
      { attempt: 2, http_status: 200 },
    ]);
    const scrape = await httpRequest(metricsPort, 'GET', '/metrics');
    expect(sampleValue(scrape.text, 'scoring_recovered_work_total', { kind: 'callbacks' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(scrape.text, 'scoring_recovered_work_total', { kind: 'runs' })).toBeGreaterThanOrEqual(5);
  }, 120_000);
});
