import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  applyTestEnvironment();
  const limits = loadConfig().limits;
  testApp = await createTestApp({ configOverrides: { limits: { ...limits, bodyBytes: 1024, batchBodyBytes: 8192 } } });
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

const batchOf = (elements: number) => ({
  scenarioName: 'not-there',
  parameters: Array.from({ length: elements }, (_, i) => ({ income: i, pad: 'xxxxxxxxxx' })),
});

describe('batch submission body limit', () => {
  it('accepts a batch body larger than the general body limit', async () => {
    const body = batchOf(60);
    expect(JSON.stringify(body).length).toBeGreaterThan(1024);
    const response = await request(testApp.app).post(`/api/batch/score?key=${user.scoreToken}`).send(body);
    // Parsed and validated; refused only because the scenario does not exist.
    expect(response.status).toBe(404);
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a batch body over LIMIT_BATCH_BODY_BYTES', async () => {
    const response = await request(testApp.app).post(`/api/batch/score?key=${user.scoreToken}`).send(batchOf(400));
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('keeps the general limit for other operations', async () => {
    const response = await request(testApp.app)
      .post(`/api/scenario/code/scoreasync/x`)
      .set('Score-Token', user.scoreToken)
      .send({ pad: 'x'.repeat(2000) });
    expect(response.status).toBe(413);
  });
});
