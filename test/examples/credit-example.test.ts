import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { waitFor } from '../execution/support.js';

/**
 * examples/credit.yaml is the scenario docs/execution.md's examples score: imported and deployed as its
 * opening comment says, it answers those examples as the page shows them.
 */
describe('examples/credit.yaml', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    await t.services.execution.startWorker();
    user = await t.newUser();
  });
  afterAll(() => t.close());

  it('imports, deploys, and scores the sync and batch examples of docs/execution.md', async () => {
    const bearer = { Authorization: `Bearer ${user.accessToken}` };
    const yaml = await readFile(new URL('../../examples/credit.yaml', import.meta.url), 'utf8');
    const imported = await request(t.app)
      .post('/api/scenario/import?context=%7B%7D&overwrite_develop=true')
      .set(bearer)
      .set('Content-Type', 'application/yaml')
      .send(yaml);
    expect(imported.status).toBe(200);
    expect(imported.body.scenarios[0]).toMatchObject({ name: 'credit', outcome: 'CREATED' });
    const deployed = await request(t.app)
      .post(`/api/scenario/deploy/${imported.body.scenarios[0].scenarioId}?context=%7B%7D`)
      .set(bearer);
    expect(deployed.status).toBe(204);

    const scored = await request(t.app)
      .post(`/api/scenario/code/remote/score?name=credit&key=${user.scoreToken}`)
      .send({ age: 40, income: 4200 });
    expect(scored.body).toMatchObject({
      name: 'credit',
      scenarioName: 'credit',
      state: 'SUCCEEDED',
      result: { decision: 'APPROVE' },
      error: null,
    });

    const batch = await request(t.app)
      .post(`/api/batch/score?key=${user.scoreToken}`)
      .send({
        scenarioName: 'credit',
        parameters: [
          { age: 40, income: 4200 },
          { age: '22', income: 900 },
        ],
      });
    expect(batch.status).toBe(202);
    const status = await waitFor(async () => {
      const answer = await request(t.app).get(`/api/batch/${batch.body.batchTaskId}?key=${user.scoreToken}`);
      return answer.body.state === 'FINISHED' ? answer.body : undefined;
    }, 20_000);
    expect(status).toMatchObject({ scenarioName: 'credit', total: 2, completed: 2, failed: 1 });
    const lines = (await request(t.app).get(`/api/batch/${batch.body.batchTaskId}/results?key=${user.scoreToken}`)).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({ index: 0, state: 'SUCCEEDED', result: { decision: 'APPROVE' }, error: null }),
      expect.objectContaining({
        index: 1,
        state: 'FAILED',
        result: null,
        error: expect.objectContaining({ code: 'INVALID_INPUT' }),
      }),
    ]);
  });
});
