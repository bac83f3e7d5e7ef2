import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, slowDoublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

let t: TestApp;
let alice: TestUser;

beforeAll(async () => {
  // A short lock lifetime: every job below runs for several lifetimes.
  process.env.JOB_LOCK_LIFETIME_MS = '1000';
  isolateJobStore('long-jobs');
  t = await createTestApp({ configOverrides: { batchChunkSize: 1000 } });
  delete process.env.JOB_LOCK_LIFETIME_MS;
  await t.services.execution.startWorker();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'slow', slowDoublingScenario(5_000_000));
});
afterAll(() => t.close());

it('keeps the lock of a batch chunk that runs longer than the job lock lifetime, and finishes it', async () => {
  const parameters = Array.from({ length: 200 }, (_, i) => ({ a: i }));
  const submitted = await request(t.app)
    .post('/api/batch/score')
    .query({ key: alice.scoreToken })
    .send({ scenarioName: 'slow', parameters });
  expect(submitted.status).toBe(202);
  const status = await waitFor(
    async () => {
      const response = await request(t.app)
        .get(`/api/batch/${submitted.body.batchTaskId}`)
        .query({ key: alice.scoreToken });
      return response.body.state === 'FINISHED' ? response.body : undefined;
    },
    50_000,
    100,
  );
  expect(status).toMatchObject({ total: 200, completed: 200, failed: 0 });
  // Its job completed (and was removed): it was not cancelled for an expired lock, which leaves a failed job behind.
  await waitFor(async () => ((await t.services.execution.queue.pendingJobs()) === 0 ? true : undefined), 5_000, 100);
}, 60_000);

it('keeps the lock of an async run job that runs longer than the job lock lifetime, and finishes it', async () => {
  // Submitted together, so they share jobs of many runs each.
  const requestIds = Array.from({ length: 120 }, () => randomUUID());
  const answers = await Promise.all(
    requestIds.map((requestId, i) =>
      request(t.app)
        .post('/api/scenario/code/scoreasync/slow')
        .set('Score-Token', alice.scoreToken)
        .set('X-SCE-RequestId', requestId)
        .send({ a: i }),
    ),
  );
  expect(answers.every((answer) => answer.status === 202)).toBe(true);
  await waitFor(
    async () => {
      const rows = (await t.services
        .db('run_results')
        .whereIn('request_id', requestIds)
        .where({ user_id: alice.id, state: 'SUCCEEDED' })
        .count({ n: '*' })
        .first()) as { n: number };
      return Number(rows.n) === requestIds.length ? true : undefined;
    },
    50_000,
    100,
  );
  await waitFor(async () => ((await t.services.execution.queue.pendingJobs()) === 0 ? true : undefined), 5_000, 100);
}, 60_000);
