import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { JobStoreUnavailableError } from '../../src/execution/job-store-unavailable-error.js';

let t: TestApp;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
});
afterAll(() => t.close());

/** The real queue, made to fail once as it would if the job store went away mid-request. */
function failNextEnqueue(method: 'enqueueRuns' | 'enqueueChunks'): void {
  jest.spyOn(t.services.execution.queue, method).mockRejectedValueOnce(new JobStoreUnavailableError('connection lost'));
}

describe('when the job store does not take the work', () => {
  it('answers 503 JOB_STORE_UNAVAILABLE with Retry-After to an async submission, stores nothing, and the same request id works on retry', async () => {
    failNextEnqueue('enqueueRuns');
    const submit = () =>
      request(t.app)
        .post('/api/scenario/code/scoreasync/double')
        .set('Score-Token', alice.scoreToken)
        .set('X-SCE-RequestId', 'retry-me')
        .send({ a: 4 });
    const failed = await submit();
    expect(failed.status).toBe(503);
    expect(failed.body.code).toBe('JOB_STORE_UNAVAILABLE');
    expect(failed.headers['retry-after']).toBe('5');
    expect(
      await t.services.db('run_results').where({ user_id: alice.id, request_id: 'retry-me' }).count({ n: '*' }),
    ).toEqual([{ n: 0 }]);
    expect((await submit()).status).toBe(202);
  });

  it('answers 503 to a batch submission and stores nothing', async () => {
    failNextEnqueue('enqueueChunks');
    const failed = await request(t.app)
      .post(`/api/batch/score?key=${alice.scoreToken}`)
      .send({ scenarioName: 'double', parameters: [{ a: 1 }, { a: 2 }] });
    expect(failed.status).toBe(503);
    expect(failed.body.code).toBe('JOB_STORE_UNAVAILABLE');
    expect(await t.services.db('batches').where({ user_id: alice.id }).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(
      await t.services.db('run_results').where({ user_id: alice.id }).whereNotNull('batch_id').count({ n: '*' }),
    ).toEqual([{ n: 0 }]);
  });
});
