import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * scoreScenario runs on the fast lane (src/http/fast-lane.ts) unless SCORE_FAST_LANE=false; both
 * must keep the contract as strictly as the rest of the API.
 */
describe.each([['the fast lane', true], ['Express', false]])('scoreScenario on %s', (_lane, fastLane) => {
let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  // Breaks the contract: ScoreResult requires runId, state, result and error.
  const broken = async () => ({ runId: 'r', score: 1 }) as never;
  testApp = await createTestApp({
    configOverrides: { scoreFastLane: fastLane },
    scoreFastLane: fastLane ? broken : undefined,
    handlers: { scoreScenario: (_req, res) => void res.json({ score: 1 }) },
  });
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

const score = (query: string) => request(testApp.app).post(`/api/scenario/code/remote/score${query}`);

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
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'query.name', message: expect.any(String) })]);
  });

  it('answers 400 naming an unknown query parameter', async () => {
    const response = await score(`?name=s&key=${user.scoreToken}&colour=blue`).send({});
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/colour/);
  });

  it('answers 400 for a name that breaks the pattern', async () => {
    const response = await score(`?name=${encodeURIComponent('../etc')}&key=${user.scoreToken}`).send({});
    expect(response.status).toBe(400);
    expect(response.body.details[0].path).toBe('query.name');
  });

  it('answers 400 when the body is not a JSON object, 415 when it is not JSON', async () => {
    const array = await score(`?name=s&key=${user.scoreToken}`).send([1, 2]);
    expect(array.status).toBe(400);
    expect(array.body.code).toBe('VALIDATION_FAILED');
    const text = await score(`?name=s&key=${user.scoreToken}`).set('Content-Type', 'text/plain').send('a=1');
    expect(text.status).toBe(415);
    expect(text.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 400 MALFORMED_BODY for JSON that does not parse', async () => {
    const response = await score(`?name=s&key=${user.scoreToken}`).set('Content-Type', 'application/json').send('{"a":');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MALFORMED_BODY');
  });
});

describe('the fast lane', () => {
  let testApp: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    testApp = await createTestApp();
    user = await testApp.newUser();
  });
  afterAll(async () => testApp.close());

  it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
    const given = await request(testApp.app).post(`/api/scenario/code/remote/score?name=s&key=${user.scoreToken}`).set('X-Request-Id', 'trace-42').send({});
    expect(given.headers['x-request-id']).toBe('trace-42');
    expect(given.body.requestId).toBe('trace-42');
    const made = await request(testApp.app).post(`/api/scenario/code/remote/score?name=s&key=${user.scoreToken}`).set('X-Request-Id', 'bad id with spaces').send({});
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('leaves other methods and paths to Express', async () => {
    expect((await request(testApp.app).get(`/api/scenario/code/remote/score?name=s&key=${user.scoreToken}`)).status).toBe(405);
    expect((await request(testApp.app).post('/api/scenario/code/remote/scorex')).status).toBe(404);
  });

  it('answers 413 from Content-Length before reading the body', async () => {
    const response = await request(testApp.app)
      .post(`/api/scenario/code/remote/score?name=s&key=${user.scoreToken}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ pad: 'x'.repeat(testApp.config.limits.bodyBytes + 1) }));
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
