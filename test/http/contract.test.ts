import request from 'supertest';
import { ERROR_CODES } from '../../src/errors/error-codes.js';
import { loadSpec } from '../../src/http/api-docs.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  testApp = await createTestApp({
    // A handler that breaks the contract: the spec promises an array of CollectionInfo.
    handlers: { listCollections: (_req, res) => void res.json({ not: 'an array' }) },
  });
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

describe('the contract', () => {
  it('serves an OpenAPI 3.1.0 document with all 24 operations at /openapi.json', async () => {
    const response = await request(testApp.app).get('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(response.body.info.version).toBe('1.9');
    const operations = Object.values(response.body.paths as Record<string, object>).flatMap((item) => Object.keys(item));
    expect(operations).toHaveLength(24);
  });

  it('serves the interactive view at /docs', async () => {
    const response = await request(testApp.app).get('/docs').redirects(1);
    expect(response.status).toBe(200);
    expect(response.text).toMatch(/swagger/i);
  });

  it('declares 401 and 400 on every operation, and an Error body on every error response', () => {
    const spec = loadSpec() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    for (const item of Object.values(spec.paths)) {
      for (const operation of Object.values(item)) {
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '401']));
      }
    }
  });

  it('lists exactly the error codes the code uses', () => {
    const spec = loadSpec() as { components: { schemas: { ErrorCode: { enum: string[] } } } };
    expect(spec.components.schemas.ErrorCode.enum).toEqual([...ERROR_CODES]);
  });

  it('turns a response that breaks the spec into a failure', async () => {
    const response = await request(testApp.app).get('/api/internaldata/collections').set('Authorization', `Bearer ${user.accessToken}`);
    expect(response.status).toBe(500);
    expect(response.body.code).toBe('INTERNAL_ERROR');
  });
});

describe('health', () => {
  it('answers live', async () => {
    const response = await request(testApp.app).get('/health/live');
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('answers ready when MySQL and the job store answer', async () => {
    const response = await request(testApp.app).get('/health/ready');
    expect(response.status).toBe(200);
    expect(response.body.checks).toEqual({ database: 'ok', jobStore: 'ok' });
  });
});
