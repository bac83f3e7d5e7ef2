import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { createUndeployedScenario, deployScenario, doublingScenario } from '../support/scenario-fixtures.js';

// The same behaviour on the fast lane (default) and through Express (SCORE_FAST_LANE=false).
describe.each([
  ['on the fast lane', true],
  ['through Express', false],
])('scoreScenario %s', (_lane, fastLane) => {
  let t: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ configOverrides: { scoreFastLane: fastLane } });
    alice = await t.newUser();
    await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
    await createUndeployedScenario(t.services.db, alice.id, 'draft');
  });
  afterAll(() => t.close());

  const score = (name: string, body: unknown, token = alice.scoreToken) =>
    request(t.app)
      .post('/api/scenario/code/remote/score')
      .query({ name, key: token })
      .send(body as object);

  it('answers 200 with the result, the version and the run id in body and header', async () => {
    const response = await score('double', { a: 21 });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      scenarioName: 'double',
      version: '1',
      state: 'SUCCEEDED',
      result: { doubled: 42 },
      error: null,
    });
    expect(response.headers['x-sce-runid']).toBe(response.body.runId);
    expect(Date.parse(response.body.endTime)).toBeGreaterThanOrEqual(Date.parse(response.body.beginTime));
  });

  it('carries name, beginTime, endTime, result and error, as the original system documents for remote/score', async () => {
    const response = await score('double', { a: 4 });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'double',
      beginTime: expect.any(String),
      endTime: expect.any(String),
      result: { doubled: 8 },
      error: null,
    });
    expect(response.body.name).toBe(response.body.scenarioName);
  });

  it('accepts the score token in the Score-Token header too', async () => {
    const response = await request(t.app)
      .post('/api/scenario/code/remote/score')
      .query({ name: 'double' })
      .set('Score-Token', alice.scoreToken)
      .send({ a: 1 });
    expect(response.status).toBe(200);
    expect(response.body.result).toEqual({ doubled: 2 });
  });

  it('runs the latest deployed version', async () => {
    const bob = await t.newUser();
    await deployScenario(t.services.db, bob.id, 'v', doublingScenario());
    await deployScenario(t.services.db, bob.id, 'v', doublingScenario());
    const response = await score('v', { a: 2 }, bob.scoreToken);
    expect(response.body.version).toBe('2');
  });

  it('answers 400 naming each unknown, missing or wrongly typed input', async () => {
    const response = await score('double', { a: 'x', bogus: 1 });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_INPUT');
    expect(response.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['a', 'bogus']);
    const missing = await score('double', {});
    expect(missing.status).toBe(400);
    expect(missing.body.details[0].path).toBe('a');
  });

  it('answers 422 naming the node when the run fails', async () => {
    const response = await score('double', { a: 13 });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('RUN_FAILED');
    expect(response.body.details[0]).toMatchObject({ nodeId: 'explode', path: 'nodes.explode' });
    expect(response.body.message).toContain('unlucky thirteen');
  });

  it('answers 404 for an unknown and for a never-deployed scenario', async () => {
    const unknown = await score('nope', { a: 1 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('SCENARIO_NOT_FOUND');
    const draft = await score('draft', { a: 1 });
    expect(draft.status).toBe(404);
    expect(draft.body.code).toBe('SCENARIO_NOT_DEPLOYED');
  });

  it("never runs another user's scenario", async () => {
    const bob = await t.newUser();
    const response = await score('double', { a: 1 }, bob.scoreToken);
    expect(response.status).toBe(404);
  });

  it('answers 401 without or with a wrong score token', async () => {
    expect(
      (await request(t.app).post('/api/scenario/code/remote/score').query({ name: 'double' }).send({ a: 1 })).status,
    ).toBe(401);
    expect((await score('double', { a: 1 }, 'not-a-token')).status).toBe(401);
  });

  it('answers 400 when the body is not a JSON object', async () => {
    const response = await score('double', [1, 2]);
    expect(response.status).toBe(400);
  });

  it('answers 413 for a body over the size limit', async () => {
    const response = await score('double', { a: 1, pad: 'x'.repeat(t.config.limits.bodyBytes + 10) });
    expect(response.status).toBe(413);
  });
});
