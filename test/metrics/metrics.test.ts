import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logger.js';
import { createMetricsServer } from '../../src/metrics/metrics-server.js';
import { CallbackReceiver, isolateJobStore, waitFor } from '../execution/support.js';
import { parseSamples, sampleValue } from '../support/prometheus-text.js';
import { deployScenario, doublingScenario, scriptScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { applyTestEnvironment } from '../support/test-environment.js';

let t: TestApp;
let alice: TestUser;
let scrapeServer: ReturnType<typeof createMetricsServer>;
const receiver = new CallbackReceiver();

beforeAll(async () => {
  isolateJobStore('metrics');
  applyTestEnvironment();
  const defaults = loadConfig();
  t = await createTestApp({
    configOverrides: {
      outboundAllowList: ['127.0.0.1'],
      limits: { ...defaults.limits, runTimeoutMs: 100 },
      // Generous: these tests check values, not time-outs (metrics-server.test.ts does), and a busy machine is slow.
      metrics: { ...defaults.metrics, enabled: true, probeTimeoutMs: 15_000 },
    },
  });
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'queued', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'loop', scriptScenario('while (true) {} out = 1;'));
  await deployScenario(t.services.db, alice.id, 'bomb', scriptScenario('out = new Array(1e9).fill(1).length;'));
  scrapeServer = createMetricsServer(t.services.metricsExposition!, {}, createLogger('silent'));
  await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

const scrape = async (): Promise<string> => {
  const response = await request(scrapeServer).get('/metrics');
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text;
};
const runs = (text: string, scenario: string, mode: string, outcome: string, version = '1') =>
  sampleValue(text, 'scoring_runs_total', { owner: alice.username, scenario, version, mode, outcome });
/** Every run of a mode this process counted, whoever's (its worker takes other test files' jobs from the shared job store too). */
const runsOfMode = (text: string, mode: string) =>
  parseSamples(text)
    .filter((sample) => sample.name === 'scoring_runs_total' && sample.labels.mode === mode)
    .reduce((sum, sample) => sum + sample.value, 0);
const score = (name: string, body: object) =>
  request(t.app).post(`/api/scenario/code/remote/score?name=${name}`).set('Score-Token', alice.scoreToken).send(body);
const submitBatch = (scenarioName: string, parameters: object[]) =>
  request(t.app).post('/api/batch/score').set('Score-Token', alice.scoreToken).send({ scenarioName, parameters });
const batchFinished = (batchTaskId: string) =>
  waitFor(async () => {
    const status = await request(t.app).get(`/api/batch/${batchTaskId}`).set('Score-Token', alice.scoreToken);
    return status.body.state === 'FINISHED' ? status.body : undefined;
  });

/** Set by the first test: a batch submitted while no worker runs, and the pending elements before it. */
let waitingBatch: { batchTaskId: string; pendingBefore: number } | undefined;

describe('/metrics before any worker runs', () => {
  it('reads the job-store queue depth and the pending batch elements when scraped', async () => {
    const before = await scrape();
    const pendingBefore = sampleValue(before, 'scoring_batch_elements_pending') as number;
    expect(sampleValue(before, 'scoring_job_queue_depth')).toBe(0);

    // No worker yet: the batch's chunk job waits in the job store, its 4 elements are pending.
    const submitted = await submitBatch('queued', [{ a: 1 }, { a: 2 }, { a: 3 }, { a: 4 }]);
    expect(submitted.status).toBe(202);
    waitingBatch = { batchTaskId: submitted.body.batchTaskId, pendingBefore };
    const waiting = await scrape();
    expect(sampleValue(waiting, 'scoring_job_queue_depth')).toBe(1);
    expect(sampleValue(waiting, 'scoring_batch_elements_pending')).toBe(pendingBefore + 4);
  });
});

describe('/metrics after known traffic', () => {
  beforeAll(async () => {
    await t.services.execution.startWorker();
  });

  it('reads the gauges back to their values before the batch once a worker has run it', async () => {
    expect(waitingBatch).toBeDefined();
    await batchFinished(waitingBatch!.batchTaskId);
    const done = await waitFor(async () => {
      const text = await scrape();
      return sampleValue(text, 'scoring_job_queue_depth') === 0 ? text : undefined;
    });
    expect(sampleValue(done, 'scoring_batch_elements_pending')).toBe(waitingBatch!.pendingBefore);
    expect(runs(done, 'queued', 'batch', 'succeeded')).toBe(4);
  });

  it("shows the engine's queued items by lane: a batch of looping runs waits in bulk, and every lane is empty again after", async () => {
    // 8 batches of one run of 100 ms each, run side by side by the worker's chunk jobs: Alice's batch work holds at
    // most one engine host (its bulk lane never takes the host its scores need), so most of them wait in the queue.
    // (One batch of 8 would go to that host as one message, and wait there, not in the queue.)
    const submitted = await Promise.all(Array.from({ length: 8 }, (_, a) => submitBatch('loop', [{ a }])));
    for (const answer of submitted) expect(answer.status).toBe(202);
    const busy = await waitFor(
      async () => {
        const text = await scrape();
        return (sampleValue(text, 'scoring_engine_queued_items', { lane: 'bulk' }) as number) > 0 ? text : undefined;
      },
      10_000,
      10,
    );
    expect(sampleValue(busy, 'scoring_engine_queued_items', { lane: 'background' })).toBe(0);
    for (const answer of submitted) await batchFinished(answer.body.batchTaskId);
    const idle = await scrape();
    for (const lane of ['live', 'validation', 'bulk', 'background'])
      expect(sampleValue(idle, 'scoring_engine_queued_items', { lane })).toBe(0);
  });

  it('counts sync runs by owner, scenario, version, mode and outcome, with their durations per mode', async () => {
    for (const a of [1, 2, 3]) expect((await score('double', { a })).status).toBe(200);
    expect((await score('double', { a: 13 })).status).toBe(422);
    expect((await score('double', { a: 'x' })).status).toBe(400);
    expect((await score('nope', { a: 1 })).status).toBe(404);
    const text = await scrape();
    expect(runs(text, 'double', 'sync', 'succeeded')).toBe(3);
    expect(runs(text, 'double', 'sync', 'failed')).toBe(1);
    expect(runs(text, 'double', 'sync', 'invalid_input')).toBe(1);
    // A scenario that does not exist never ran: no series for it.
    expect(text).not.toContain('scenario="nope"');
    expect(sampleValue(text, 'scoring_run_duration_seconds_count', { mode: 'sync' })).toBe(5);
    expect(sampleValue(text, 'scoring_run_duration_seconds_bucket', { mode: 'sync', le: '+Inf' })).toBe(5);
    expect(sampleValue(text, 'scoring_run_duration_seconds_sum', { mode: 'sync' })).toBeGreaterThan(0);
  });

  it('counts the elements of a batch', async () => {
    const submitted = await submitBatch('double', [{ a: 1 }, { a: 2 }, { a: 13 }, { a: 4 }, { a: 5 }]);
    await batchFinished(submitted.body.batchTaskId);
    const text = await scrape();
    expect(runs(text, 'double', 'batch', 'succeeded')).toBe(4);
    expect(runs(text, 'double', 'batch', 'failed')).toBe(1);
    expect(sampleValue(text, 'scoring_run_duration_seconds_count', { mode: 'batch' })).toBe(runsOfMode(text, 'batch'));
  });

  it('counts async runs and callback attempts by outcome', async () => {
    const submit = (a: number, retries: number) =>
      request(t.app)
        .post('/api/scenario/code/scoreasync/double')
        .set('Score-Token', alice.scoreToken)
        .set({
          'X-SCE-RequestId': randomUUID(),
          'X-SCE-CallbackUrl': receiver.url('/hook'),
          'X-SCE-CallbackRetryCount': String(retries),
          'X-SCE-CallbackRetryDelay': '0',
        })
        .send({ a });
    const settled = (delivered: number, retrying: number, failed: number) =>
      waitFor(async () => {
        const text = await scrape();
        const counts = ['delivered', 'retrying', 'failed'].map((outcome) =>
          sampleValue(text, 'scoring_callback_deliveries_total', { outcome }),
        );
        return counts.join() === [delivered, retrying, failed].join() ? text : undefined;
      });
    const before = await scrape();
    expect(
      ['delivered', 'retrying', 'failed'].map((outcome) =>
        sampleValue(before, 'scoring_callback_deliveries_total', { outcome }),
      ),
    ).toEqual([0, 0, 0]);

    receiver.answer(500, 200);
    expect((await submit(2, 1)).status).toBe(202);
    await settled(1, 1, 0);
    receiver.answer(500);
    expect((await submit(3, 0)).status).toBe(202);
    const text = await settled(1, 1, 1);
    expect(runs(text, 'double', 'async', 'succeeded')).toBe(2);
    // Every async run this process ran has its duration counted. In the full suite its worker also takes
    // other test files' async jobs from the shared job store, so the count is of every async run here.
    const asyncRuns = runsOfMode(text, 'async');
    expect(asyncRuns).toBeGreaterThanOrEqual(2);
    expect(sampleValue(text, 'scoring_run_duration_seconds_count', { mode: 'async' })).toBe(asyncRuns);
  });

  it('counts runs that hit the sandbox time and memory limits', async () => {
    const loop = await score('loop', { a: 1 });
    expect(loop.body.details[0].code).toBe('TIME_LIMIT_EXCEEDED');
    const bomb = await score('bomb', { a: 1 });
    expect(bomb.body.details[0].code).toBe('MEMORY_LIMIT_EXCEEDED');
    const text = await scrape();
    const limitFailures = (scenario: string, limit: string) =>
      sampleValue(text, 'scoring_sandbox_limit_failures_total', {
        owner: alice.username,
        scenario,
        mode: 'sync',
        limit,
      });
    expect(limitFailures('loop', 'time')).toBe(1);
    expect(limitFailures('bomb', 'memory')).toBe(1);
    expect(limitFailures('loop', 'memory')).toBeUndefined();
    expect(runs(text, 'loop', 'sync', 'failed')).toBe(1);
    expect(runs(text, 'bomb', 'sync', 'failed')).toBe(1);
  });

  it('counts the records reported dropped, by reason', async () => {
    t.services.metrics.recordsDropped(3, 'buffer_full');
    t.services.metrics.recordsDropped(2, 'buffer_full');
    t.services.metrics.recordsDropped(1, 'write_failed');
    const text = await scrape();
    expect(sampleValue(text, 'scoring_records_dropped_total', { reason: 'buffer_full' })).toBe(5);
    expect(sampleValue(text, 'scoring_records_dropped_total', { reason: 'write_failed' })).toBe(1);
    expect(sampleValue(text, 'scoring_statistics_dropped_total')).toBe(0);
  });

  it('describes every metric of its own with HELP and TYPE lines, next to the process metrics', async () => {
    const text = await scrape();
    for (const [name, type] of [
      ['scoring_runs_total', 'counter'],
      ['scoring_run_duration_seconds', 'histogram'],
      ['scoring_sandbox_limit_failures_total', 'counter'],
      ['scoring_callback_deliveries_total', 'counter'],
      ['scoring_records_dropped_total', 'counter'],
      ['scoring_statistics_dropped_total', 'counter'],
      ['scoring_batch_elements_pending', 'gauge'],
      ['scoring_job_queue_depth', 'gauge'],
    ]) {
      expect(text).toContain(`# TYPE ${name} ${type}`);
      expect(text).toMatch(new RegExp(`# HELP ${name} \\S`));
    }
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
  });

  it('is not served by the API, whose clients would otherwise read every tenant’s scenario names', async () => {
    const response = await request(t.app).get('/metrics');
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('ROUTE_NOT_FOUND');
  });
});

describe('with METRICS_ENABLED off', () => {
  it('counts nothing and has nothing to serve', async () => {
    const off = await createTestApp();
    try {
      expect(off.config.metrics.enabled).toBe(false);
      expect(off.services.metricsExposition).toBeUndefined();
      expect((await request(off.app).get('/metrics')).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
