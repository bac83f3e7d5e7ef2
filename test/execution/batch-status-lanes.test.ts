import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** getBatchStatus is served on the fast lane (clients poll it) unless SCORE_FAST_LANE=false: both keep the contract. */
describe.each([
  ['the fast lane', true],
  ['Express', false],
])('getBatchStatus on %s', (_lane, fastLane) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let batchId: string;

  beforeAll(async () => {
    t = await createTestApp({ configOverrides: { scoreFastLane: fastLane } });
    alice = await t.newUser();
    bob = await t.newUser();
    batchId = randomUUID();
    await t.services.execution.batchStore.insertBatch({
      id: batchId,
      userId: alice.id,
      scenarioName: 'double',
      chunkSize: 2,
      inputs: [{ a: 1 }, { a: 2 }, { a: 3 }],
    });
  });
  afterAll(() => t.close());

  const status = (id: string, token?: string) => {
    const call = request(t.app).get(`/api/batch/${id}`);
    return token ? call.set('Score-Token', token) : call;
  };

  it('answers 200 with the progress of a queued batch', async () => {
    const response = await status(batchId, alice.scoreToken);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      batchTaskId: batchId,
      scenarioName: 'double',
      state: 'QUEUED',
      total: 3,
      completed: 0,
      failed: 0,
      finishedAt: null,
      resultsIds: [],
    });
  });

  it("answers 404 BATCH_NOT_FOUND for another user's batch, an unknown one and an id that is not one of ours", async () => {
    for (const [id, token] of [
      [batchId, bob.scoreToken],
      [randomUUID(), alice.scoreToken],
      ['not-a-batch', alice.scoreToken],
    ]) {
      const response = await status(id, token);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ status: 404, code: 'BATCH_NOT_FOUND' });
    }
  });

  it('answers 401 without a score token or with a wrong one', async () => {
    expect((await status(batchId)).status).toBe(401);
    expect((await status(batchId, 'wrong-token')).status).toBe(401);
  });
});
