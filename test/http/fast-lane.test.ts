import request from 'supertest';
import { outsideTheContract } from '../support/outside-the-contract.js';
import { useTestApp } from '../support/test-app.js';

/**
 * scoreScenario runs on the fast lane (src/http/fast-lane.ts) unless SCORE_FAST_LANE=false; both
 * must keep the contract as strictly as the rest of the API.
 */
describe.each([
  ['the fast lane', true],
  ['Express', false],
])('scoreScenario on %s', (_lane, fastLane) => {
  // Breaks the contract: ScoreResult requires runId, state, result and error.
  const broken = outsideTheContract(async () => ({ status: 200, body: { runId: 'r', score: 1 } }));
  const t = useTestApp({
    configOverrides: { scoreFastLane: fastLane },
    fastLane: { scoreScenario: broken },
    handlers: { scoreScenario: outsideTheContract(async () => ({ status: 200, body: { score: 1 } })) },
  });

  const score = (query: string) => request(t.app.app).post(`/api/scenario/code/remote/score${query}`);

  it('turns a response that breaks the spec into a failure', async () => {
    const response = await score(`?name=s&key=${t.user.scoreToken}`).send({ a: 1 });
    expect(response.status).toBe(500);
    expect(response.body.code).toBe('INTERNAL_ERROR');
  });

  it('answers 401 before validating anything', async () => {
    const response = await score('?bogus=1').set('Content-Type', 'application/json').send('{"broken');
    expect(response.status).toBe(401);
  });

  it('answers 400 naming a missing query parameter', async () => {
    const response = await score(`?key=${t.user.scoreToken}`).send({});
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(response.body.details).toEqual([
      expect.objectContaining({ path: 'query.name', message: expect.any(String) }),
    ]);
  });

  it('answers 400 naming an unknown query parameter', async () => {
    const response = await score(`?name=s&key=${t.user.scoreToken}&colour=blue`).send({});
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/colour/);
  });

  it('answers 400 for a name that breaks the pattern', async () => {
    const response = await score(`?name=${encodeURIComponent('../etc')}&key=${t.user.scoreToken}`).send({});
    expect(response.status).toBe(400);
    expect(response.body.details[0].path).toBe('query.name');
  });

  it('answers 400 when the body is not a JSON object, 415 when it is not JSON', async () => {
    const array = await score(`?name=s&key=${t.user.scoreToken}`).send([1, 2]);
    expect(array.status).toBe(400);
    expect(array.body.code).toBe('VALIDATION_FAILED');
    const text = await score(`?name=s&key=${t.user.scoreToken}`).set('Content-Type', 'text/plain').send('a=1');
    expect(text.status).toBe(415);
    expect(text.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 400 MALFORMED_BODY for JSON that does not parse', async () => {
    const response = await score(`?name=s&key=${t.user.scoreToken}`)
      .set('Content-Type', 'application/json')
      .send('{"a":');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MALFORMED_BODY');
  });

  it('answers 400 naming the body when none is sent, with or without a JSON content type (both lanes alike)', async () => {
    for (const contentType of ['application/json', undefined]) {
      const call = score(`?name=s&key=${t.user.scoreToken}`);
      const response = await (contentType ? call.set('Content-Type', contentType).send('') : call);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        code: 'VALIDATION_FAILED',
        message: 'body is required (application/json)',
        details: [{ path: 'body', message: 'is required (application/json)' }],
      });
    }
  });
});

describe('the fast lane', () => {
  const t = useTestApp();

  it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
    const given = await request(t.app.app)
      .post(`/api/scenario/code/remote/score?name=s&key=${t.user.scoreToken}`)
      .set('X-Request-Id', 'trace-42')
      .send({});
    expect(given.headers['x-request-id']).toBe('trace-42');
    expect(given.body.requestId).toBe('trace-42');
    const made = await request(t.app.app)
      .post(`/api/scenario/code/remote/score?name=s&key=${t.user.scoreToken}`)
      .set('X-Request-Id', 'bad id with spaces')
      .send({});
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('leaves other methods and paths to Express', async () => {
    expect(
      (await request(t.app.app).get(`/api/scenario/code/remote/score?name=s&key=${t.user.scoreToken}`)).status,
    ).toBe(405);
    expect((await request(t.app.app).post('/api/scenario/code/remote/scorex')).status).toBe(404);
  });

  it('answers 413 from Content-Length before reading the body', async () => {
    const response = await request(t.app.app)
      .post(`/api/scenario/code/remote/score?name=s&key=${t.user.scoreToken}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ pad: 'x'.repeat(t.app.config.limits.bodyBytes + 1) }));
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

/** The async operations run on the fast lane too (SCORE_FAST_LANE=false: through Express); both keep the same rules. */
describe.each([
  ['the fast lane', true],
  ['Express', false],
])('scoreAsync and getAsyncScoreResult on %s', (_lane, fastLane) => {
  const t = useTestApp({ configOverrides: { scoreFastLane: fastLane } });

  const submit = (path = '/api/scenario/code/scoreasync/s') => request(t.app.app).post(path);
  const fetchResult = (path = '/api/scenario/code/scoreasyncresult/s') => request(t.app.app).get(path);

  it('answers 401 before validating anything', async () => {
    expect(
      (await submit().set('X-SCE-RequestId', 'bad id!').set('Content-Type', 'application/json').send('{"broken'))
        .status,
    ).toBe(401);
    expect((await fetchResult()).status).toBe(401);
  });

  it('answers 400 naming a header that breaks its schema', async () => {
    const badId = await submit().set('Score-Token', t.user.scoreToken).set('X-SCE-RequestId', 'bad id!').send({});
    expect(badId.status).toBe(400);
    expect(badId.body.details).toEqual([expect.objectContaining({ path: 'headers.x-sce-requestid' })]);
    const badCount = await submit()
      .set('Score-Token', t.user.scoreToken)
      .set('X-SCE-CallbackUrl', 'https://hooks.example/x')
      .set('X-SCE-CallbackRetryCount', 'many')
      .send({});
    expect(badCount.status).toBe(400);
    expect(badCount.body.details).toEqual([expect.objectContaining({ path: 'headers.x-sce-callbackretrycount' })]);
    const missing = await fetchResult().set('Score-Token', t.user.scoreToken);
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([expect.objectContaining({ path: 'headers.x-sce-requestid' })]);
  });

  it('answers 400 naming a path parameter that breaks its schema', async () => {
    const response = await submit('/api/scenario/code/scoreasync/-dash-first')
      .set('Score-Token', t.user.scoreToken)
      .send({});
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'params.name' })]);
  });

  it('reads escaped path parameters and integer headers', async () => {
    // An unknown scenario: the request passed validation and reached the service with the decoded name.
    const response = await submit(`/api/scenario/code/scoreasync/${encodeURIComponent('my scenario')}`)
      .set('Score-Token', t.user.scoreToken)
      .set('X-SCE-CallbackRetryCount', '2')
      .send({});
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({
      code: 'SCENARIO_NOT_FOUND',
      message: expect.stringContaining('"my scenario"'),
    });
  });

  it('answers 415 for a body that is not JSON and 404 RESULT_NOT_FOUND for an unknown request id', async () => {
    const text = await submit().set('Score-Token', t.user.scoreToken).set('Content-Type', 'text/plain').send('a=1');
    expect(text.status).toBe(415);
    const unknown = await fetchResult().set('Score-Token', t.user.scoreToken).set('X-SCE-RequestId', 'never-used');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('RESULT_NOT_FOUND');
  });
});
