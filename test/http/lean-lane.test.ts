import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** scoreScenario runs on a lean lane (src/http/operation-validator.ts); it must keep the contract as strictly as the rest. */
let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  testApp = await createTestApp({
    // Breaks the contract: ScoreResult requires runId, state, result and error.
    handlers: { scoreScenario: (_req, res) => void res.json({ score: 1 }) },
  });
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

const score = (query: string) => request(testApp.app).post(`/api/scenario/code/remote/score${query}`);

describe('the lean lane of scoreScenario', () => {
  it('turns a response that breaks the spec into a failure', async () => {
    const response = await score(`?name=s&key=${user.scoreToken}`).send({ a: 1 });
    expect(response.status).toBe(500);
    expect(response.body.code).toBe('INTERNAL_ERROR');
  });

  it('answers 401 before validating anything', async () => {
    const response = await score('?bogus=1').set('Content-Type', 'application/json').send('{"broken');
    expect(response.status).toBe(401);
  });

  it('answers 400 naming a missing query parameter', async () => {
    const response = await score(`?key=${user.scoreToken}`).send({});
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(response.body.details).toEqual([{ path: 'query.name', message: expect.any(String) }]);
  });

  it('answers 400 naming an unknown query parameter', async () => {
    const response = await score(`?name=s&key=${user.scoreToken}&colour=blue`).send({});
    expect(response.status).toBe(400);
    expect(response.body.details[0].path).toBe('query.colour');
  });

  it('answers 400 for a name that breaks the pattern', async () => {
    const response = await score(`?name=${encodeURIComponent('../etc')}&key=${user.scoreToken}`).send({});
    expect(response.status).toBe(400);
    expect(response.body.details[0].path).toBe('query.name');
  });

  it('answers 400 when the body is not a JSON object', async () => {
    const array = await score(`?name=s&key=${user.scoreToken}`).send([1, 2]);
    expect(array.status).toBe(400);
    expect(array.body.details[0].path).toBe('body');
    const text = await score(`?name=s&key=${user.scoreToken}`).set('Content-Type', 'text/plain').send('a=1');
    expect(text.status).toBe(400);
  });

  it('answers 400 MALFORMED_BODY for JSON that does not parse', async () => {
    const response = await score(`?name=s&key=${user.scoreToken}`).set('Content-Type', 'application/json').send('{"a":');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MALFORMED_BODY');
  });
});
