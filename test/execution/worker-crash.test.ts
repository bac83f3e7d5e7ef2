import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, slowDoublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ELEMENTS = 2000;
const CHUNK = 500;

let t: TestApp;
let alice: TestUser;
let prefix: string;
const children: ChildProcess[] = [];

/**
 * A worker process on this test's job-store prefix: `node --import tsx src/worker.ts`, not the
 * `tsx` launcher, which runs the worker in a grandchild that a SIGKILL of the launcher leaves alive.
 */
function startWorker(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DEBUG: process.env.WORKER_DEBUG ?? '',
      NODE_OPTIONS: '',
      APP_ENV: 'test',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      JOBS_KEY_PREFIX: prefix,
      WORKER_CHUNK_CONCURRENCY: '2',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

beforeAll(async () => {
  prefix = isolateJobStore('crash');
  // This process only enqueues: it never calls startWorker.
  t = await createTestApp({ configOverrides: { batchChunkSize: CHUNK } });
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'slow', slowDoublingScenario(1_300_000));
  // Slower elements for the SIGTERM test: the batch must not be able to finish in the moments between
  // the test seeing its first stored results and the worker handling the signal.
  await deployScenario(t.services.db, alice.id, 'slower', slowDoublingScenario(4_000_000));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await t.close();
});

const counts = async (batchId: string) => {
  const rows = (await t.services
    .db('run_results')
    .where({ batch_id: batchId })
    .groupBy('state')
    .select('state')
    .count({ n: '*' })) as Array<{ state: string; n: number }>;
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.n)])) as Record<string, number>;
};

it('finishes a batch with exactly one result per element after a worker is killed mid-batch', async () => {
  // The first worker holds its locks for the default minute: only the second worker's short lock lifetime lets it take them over.
  const first = startWorker({ JOB_LOCK_LIFETIME_MS: '60000' });
  const parameters = Array.from({ length: ELEMENTS }, (_, i) => ({ a: i }));
  const submitted = await request(t.app)
    .post('/api/batch/score')
    .query({ key: alice.scoreToken })
    .send({ scenarioName: 'slow', parameters });
  expect(submitted.status).toBe(202);
  const batchId: string = submitted.body.batchTaskId;

  const before = await waitFor(
    async () => {
      const c = await counts(batchId);
      return (c.SUCCEEDED ?? 0) >= 250 ? c : undefined;
    },
    30_000,
    10,
  );
  first.kill('SIGKILL');
  await exited(first);
  const atKill = await counts(batchId);
  expect(atKill.SUCCEEDED).toBeLessThan(ELEMENTS);
  // The killed worker left chunks started and not finished.
  expect(
    Number(
      (
        (await t.services
          .db('batch_chunks')
          .where({ batch_id: batchId })
          .whereNotNull('started_at')
          .whereNull('finished_at')
          .count({ n: '*' })
          .first()) as { n: number }
      ).n,
    ),
  ).toBeGreaterThan(0);
  expect(before.SUCCEEDED).toBeGreaterThan(0);

  const second = startWorker({ JOB_LOCK_LIFETIME_MS: '2000', JOB_POLL_MS: '500' });
  const status = await waitFor(
    async () => {
      const response = await request(t.app).get(`/api/batch/${batchId}`).query({ key: alice.scoreToken });
      return response.body.state === 'FINISHED' ? response.body : undefined;
    },
    40_000,
    100,
  );

  expect(status).toMatchObject({ total: ELEMENTS, completed: ELEMENTS, failed: 0 });
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
  expect(rows.every((row, i) => row.element_index === i && row.state === 'SUCCEEDED')).toBe(true);
  // Element i was submitted as {a: i}.
  expect(rows.every((row) => JSON.parse(row.result).doubled === row.element_index * 2)).toBe(true);
  expect(status.resultsIds).toHaveLength(ELEMENTS);
  expect(new Set(status.resultsIds).size).toBe(ELEMENTS);
  expect(status.resultsIds).toEqual(rows.map((row) => row.id));
  // Finished work leaves nothing behind in the job store.
  expect(await t.services.execution.queue.pendingJobs()).toBe(0);

  // Graceful shutdown: SIGTERM ends the worker cleanly.
  second.kill('SIGTERM');
  expect(await exited(second)).toBe(0);
}, 60_000);

it('releases its chunks at once when stopped with SIGTERM mid-batch, so another worker finishes the batch exactly once', async () => {
  // Both workers hold locks for a minute: the batch can finish within the test only if the stopped worker releases them.
  const first = startWorker({ JOB_LOCK_LIFETIME_MS: '60000' });
  const parameters = Array.from({ length: 1000 }, (_, i) => ({ a: i }));
  const submitted = await request(t.app)
    .post('/api/batch/score')
    .query({ key: alice.scoreToken })
    .send({ scenarioName: 'slower', parameters });
  expect(submitted.status).toBe(202);
  const batchId: string = submitted.body.batchTaskId;
  // Stopped as soon as a chunk job has started (batch_chunks.started_at): the engine runs both chunks' elements in
  // shared crossings, so waiting for stored results could stop them in their last flush, with nothing to hand back.
  await waitFor(
    async () =>
      (await t.services.db('batch_chunks').where({ batch_id: batchId }).whereNotNull('started_at').first())
        ? true
        : undefined,
    30_000,
    10,
  );

  const stoppedAt = Date.now();
  first.kill('SIGTERM');
  expect(await exited(first)).toBe(0);
  expect(Date.now() - stoppedAt).toBeLessThan(15_000);
  expect((await counts(batchId)).SUCCEEDED ?? 0).toBeLessThan(1000);

  startWorker({ JOB_LOCK_LIFETIME_MS: '60000', JOB_POLL_MS: '500' });
  const status = await waitFor(
    async () => {
      const response = await request(t.app).get(`/api/batch/${batchId}`).query({ key: alice.scoreToken });
      return response.body.state === 'FINISHED' ? response.body : undefined;
    },
    40_000,
    100,
  );
  expect(status).toMatchObject({ total: 1000, completed: 1000, failed: 0 });
  expect(new Set(status.resultsIds).size).toBe(1000);
  const rows = (await t.services
    .db('run_results')
    .where({ batch_id: batchId })
    .select('element_index', 'result', 'state')) as Array<{ element_index: number; result: string; state: string }>;
  expect(rows).toHaveLength(1000);
  expect(
    rows.every((row) => row.state === 'SUCCEEDED' && JSON.parse(row.result).doubled === row.element_index * 2),
  ).toBe(true);
}, 60_000);
