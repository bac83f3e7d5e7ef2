import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** Numeric path, query and header parameters: ±Infinity and numbers past the id range are a 400, never a 500. */

let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  testApp = await createTestApp();
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

const bearer = () => ({ Authorization: `Bearer ${user.accessToken}` });

describe('numbers the validator coerces to Infinity', () => {
  it.each([['Infinity', 'Infinity'], ['-Infinity', '-Infinity'], ['1e400', '1e400'], ['a 400-digit number', '9'.repeat(400)]])('answers 400 naming the scenario id for id %s', async (_label, id) => {
    const response = await request(testApp.app).get(`/api/scenario/open/${id}`).query({ context: user.context() }).set(bearer());
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', details: [expect.objectContaining({ path: 'params.id' })] });
  });

  it('answers 400 naming the test case id for testCaseId Infinity', async () => {
    const response = await request(testApp.app).put('/api/scenario/1/testcases/Infinity').query({ context: user.context() }).set(bearer())
      .send({ name: 't', variables: [], expression: { code: 'true' } });
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'params.testCaseId' })]);
  });

  it('answers 400 naming limit for limit=Infinity on a collection read', async () => {
    const response = await request(testApp.app).get('/api/internaldata/collections/anything').query({ limit: 'Infinity' }).set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'query.limit' })]);
  });

  it('answers 400 naming the header for X-SCE-CallbackRetryDelay: 1e400 on an async submission', async () => {
    const response = await request(testApp.app).post('/api/scenario/code/scoreasync/anything').set('Score-Token', user.scoreToken)
      .set('X-SCE-CallbackRetryDelay', '1e400').send({});
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'headers.X-SCE-CallbackRetryDelay' })]);
  });
});

describe('ids past the range of the id columns', () => {
  it.each(['4294967296', '99999999999999999999'])('answers 400 for scenario id %s', async (id) => {
    const response = await request(testApp.app).get(`/api/scenario/${id}/version`).query({ context: user.context() }).set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'params.id', message: expect.stringContaining('4294967295') })]);
  });
});

describe('express-openapi-validator on its own (why src/http/finite-numbers.ts exists)', () => {
  it('still lets "Infinity" through an integer parameter with a maximum; when this fails, the workaround can go', async () => {
    const spec = {
      openapi: '3.1.0', info: { title: 't', version: '1' },
      paths: { '/n/{n}': { get: { parameters: [{ name: 'n', in: 'path', required: true, schema: { type: 'integer', minimum: 1, maximum: 10 } }], responses: { 200: { description: 'ok' } } } } },
    };
    const app = express();
    app.use(OpenApiValidator.middleware({ apiSpec: spec as never, validateRequests: true, validateResponses: false }));
    app.get('/n/:n', (req, res) => void res.json({ n: req.params.n }));
    app.use(((error, _req, res, _next) => void res.status(error.status ?? 500).json({ message: error.message })) as express.ErrorRequestHandler);
    expect((await request(app).get('/n/11')).status).toBe(400);
    expect((await request(app).get('/n/Infinity')).status).toBe(200);
  });
});
