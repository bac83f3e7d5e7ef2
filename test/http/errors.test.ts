import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  testApp = await createTestApp({
    configOverrides: {
      limits: { ...(await import('../../src/config/config.js')).loadConfig().limits, bodyBytes: 2048 },
    },
  });
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

const bearer = () => ({ Authorization: `Bearer ${user.accessToken}` });

describe('error responses', () => {
  it('answers 400 MALFORMED_BODY for JSON that does not parse', async () => {
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer())
      .set('Content-Type', 'application/json')
      .send('{"name": ');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 400, code: 'MALFORMED_BODY' });
    expect(response.text).not.toMatch(/at .*\.ts:\d+/);
  });

  it('answers 400 MALFORMED_BODY naming the line for YAML that does not parse', async () => {
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer())
      .set('Content-Type', 'application/yaml')
      .send('name: a\n  bad: [\n');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MALFORMED_BODY');
    expect(response.body.message).toMatch(/line \d+/);
  });

  it('answers 404 ROUTE_NOT_FOUND for an unknown route', async () => {
    const response = await request(testApp.app).get('/api/nothing-here');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ status: 404, code: 'ROUTE_NOT_FOUND' });
  });

  it('names the method and the path as sent in a 404 for a path the spec does not know, never its own dotted form', async () => {
    const response = await request(testApp.app).get('/api/scenario//input').set(bearer());
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      status: 404,
      code: 'ROUTE_NOT_FOUND',
      message: 'No route GET /api/scenario//input.',
      requestId: expect.any(String),
    });
  });

  it('answers 405 METHOD_NOT_ALLOWED with an Allow header naming the methods the path takes', async () => {
    const response = await request(testApp.app).delete('/api/scenario/import').set(bearer());
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.body).toEqual({
      status: 405,
      code: 'METHOD_NOT_ALLOWED',
      message: 'DELETE is not allowed on /api/scenario/import; it takes POST.',
      requestId: expect.any(String),
    });
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over the configured limit', async () => {
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer())
      .send({ name: 'x', content: 'y'.repeat(5000), nodeProperties: {} });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 400 naming the parameter when a required query parameter is missing', async () => {
    const response = await request(testApp.app)
      .post('/api/internaldata/collections/loadData/no_file_name')
      .set(bearer())
      .attach('file', Buffer.from('id\n1\n'), 'ids.csv');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.message).toMatch(/fileName/);
  });

  it('answers 400 naming the parameter when a query parameter has the wrong type', async () => {
    const response = await request(testApp.app)
      .post('/api/scenario/deploy/1')
      .query({ context: user.context(), skip_validation: 'maybe' })
      .set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.details[0].path).toMatch(/skip_validation/);
  });

  it('answers 404, not 400, for a path id that is not one of ours', async () => {
    const response = await request(testApp.app)
      .post('/api/scenario/validate/abc')
      .query({ context: user.context() })
      .set(bearer());
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('SCENARIO_NOT_FOUND');
  });

  it('answers 400 for an unknown query parameter', async () => {
    const response = await request(testApp.app)
      .post('/api/scenario/deploy/1')
      .query({ context: user.context(), bogus: 1 })
      .set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/bogus/);
  });
});
