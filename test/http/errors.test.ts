import request from 'supertest';
import type { RequestHandler } from 'express';
import { resolveOwner } from '../../src/auth/access-context.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

let testApp: TestApp;
let user: TestUser;

/** Stands in for a scenario operation: resolves the owner from `context` and answers 204. */
function ownerProbe(app: () => TestApp): RequestHandler {
  return async (req, res, next) => {
    try {
      const owner = await resolveOwner(req, app().services.users);
      res.setHeader('X-Owner', owner.username);
      res.status(204).end();
    } catch (error) {
      next(error);
    }
  };
}

beforeAll(async () => {
  testApp = await createTestApp({
    configOverrides: { limits: { ...(await import('../../src/config/config.js')).loadConfig().limits, bodyBytes: 2048 } },
    handlers: { deployScenario: ownerProbe(() => testApp) },
  });
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

const bearer = () => ({ Authorization: `Bearer ${user.accessToken}` });

describe('error responses', () => {
  it('answers 400 MALFORMED_BODY for JSON that does not parse', async () => {
    const response = await request(testApp.app).post('/api/scenario/import').query({ context: user.context() }).set(bearer()).set('Content-Type', 'application/json').send('{"name": ');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 400, code: 'MALFORMED_BODY' });
    expect(response.text).not.toMatch(/at .*\.ts:\d+/);
  });

  it('answers 400 MALFORMED_BODY naming the line for YAML that does not parse', async () => {
    const response = await request(testApp.app).post('/api/scenario/import').query({ context: user.context() }).set(bearer()).set('Content-Type', 'application/yaml').send('name: a\n  bad: [\n');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MALFORMED_BODY');
    expect(response.body.message).toMatch(/line \d+/);
  });

  it('answers 404 ROUTE_NOT_FOUND for an unknown route', async () => {
    const response = await request(testApp.app).get('/api/nothing-here');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ status: 404, code: 'ROUTE_NOT_FOUND' });
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over the configured limit', async () => {
    const response = await request(testApp.app).post('/api/scenario/import').query({ context: user.context() }).set(bearer()).send({ name: 'x', content: 'y'.repeat(5000), nodeProperties: {} });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 400 naming the parameter when a required query parameter is missing', async () => {
    const response = await request(testApp.app).post('/api/scenario/deploy/1').set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.message).toMatch(/context/);
  });

  it('answers 400 naming the parameter when a path parameter has the wrong type', async () => {
    const response = await request(testApp.app).post('/api/scenario/deploy/abc').query({ context: user.context() }).set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.details[0].path).toMatch(/id/);
  });

  it('answers 400 for an unknown query parameter', async () => {
    const response = await request(testApp.app).post('/api/scenario/deploy/1').query({ context: user.context(), bogus: 1 }).set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/bogus/);
  });
});

describe('access-control context', () => {
  it('accepts a context naming the token user', async () => {
    const response = await request(testApp.app).post('/api/scenario/deploy/1').query({ context: user.context() }).set(bearer());
    expect(response.status).toBe(204);
    expect(response.headers['x-owner']).toBe(user.username);
  });

  it('answers 403 CONTEXT_MISMATCH when the context names another requester', async () => {
    const response = await request(testApp.app).post('/api/scenario/deploy/1').query({ context: JSON.stringify({ requester: { username: 'someone-else' } }) }).set(bearer());
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('CONTEXT_MISMATCH');
  });

  it('answers 403 when a non-admin names another owner', async () => {
    const other = await testApp.newUser();
    const response = await request(testApp.app).post('/api/scenario/deploy/1').query({ context: user.context(other.username) }).set(bearer());
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });

  it('lets an admin act for another owner', async () => {
    const admin = await testApp.newUser({ admin: true });
    const response = await request(testApp.app).post('/api/scenario/deploy/1').query({ context: admin.context(user.username) }).set('Authorization', `Bearer ${admin.accessToken}`);
    expect(response.status).toBe(204);
    expect(response.headers['x-owner']).toBe(user.username);
  });

  it.each([
    ['importScenarios', '/api/scenario/import', 'application/json', '{"name":"x","content":{},"nodeProperties":{}}'],
    ['createInputVariablesFromCsv', '/api/scenario/data/inputvariables/create', 'multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="file"; filename="v.csv"\r\n\r\nname,type\r\na,INTEGER\r\n--b--\r\n'],
  ])('answers %s with 404, which it declares, when an admin names an owner who does not exist', async (_operationId, path, type, body) => {
    const admin = await testApp.newUser({ admin: true });
    const response = await request(testApp.app).post(path).query({ context: admin.context('nobody-at-all') }).set('Authorization', `Bearer ${admin.accessToken}`)
      .set('Content-Type', type).send(body);
    expect(response.status).toBe(404);
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'query.context.owner' })]);
  });

  it('answers 400 when the context is not JSON of the right shape', async () => {
    const response = await request(testApp.app).post('/api/scenario/deploy/1').query({ context: '{"requester":"me"}' }).set(bearer());
    expect(response.status).toBe(400);
  });
});
