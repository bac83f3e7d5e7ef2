import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** Operations that declare no request body ignore one: no 400 for broken JSON or YAML, no 413 for its size. */

let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  testApp = await createTestApp();
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

const bearer = () => ({ Authorization: `Bearer ${user.accessToken}` });

describe('a body sent to an operation that declares none', () => {
  it('is ignored when it is broken JSON (GET listCollections answers 200)', async () => {
    const response = await request(testApp.app).get('/api/internaldata/collections').set(bearer()).set('Content-Type', 'application/json').send('{');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('is ignored when it is larger than the body limit (GET openScenario answers 404 for a missing scenario)', async () => {
    const response = await request(testApp.app).get('/api/scenario/open/999999').query({ context: user.context() }).set(bearer())
      .set('Content-Type', 'application/json').send(`"${'x'.repeat(2 * 1024 * 1024)}"`);
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('SCENARIO_NOT_FOUND');
  });

  it('is ignored when it is broken YAML (POST renameScenario answers 404 for a missing scenario)', async () => {
    const response = await request(testApp.app).post('/api/scenario/rename/missing/other').query({ context: user.context() }).set(bearer())
      .set('Content-Type', 'application/yaml').send('a: [');
    expect(response.status).toBe(404);
  });

  it('is still read by operations that declare one (broken JSON to import is 400 MALFORMED_BODY)', async () => {
    const response = await request(testApp.app).post('/api/scenario/import').query({ context: user.context() }).set(bearer()).set('Content-Type', 'application/json').send('{');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MALFORMED_BODY');
  });
});

describe('listCollections', () => {
  it('answers 400, which it declares, for an unknown query parameter', async () => {
    const response = await request(testApp.app).get('/api/internaldata/collections').query({ foo: 'bar' }).set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'query.foo' })]);
  });
});
