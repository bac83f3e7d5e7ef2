import request from 'supertest';
import type { RouteDefinition } from '../../generated/routes.js';
import { loadConfig } from '../../src/config/config.js';
import { loadSpec } from '../../src/http/api-docs.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearerRoutes, sampleUrl, scoreTokenRoutes } from '../support/sample-requests.js';

/** Every operation that takes a body declares 415 and 413, and answers them. */
const spec = loadSpec() as {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: unknown;
        responses: Record<string, unknown>;
        parameters?: Array<{ name?: string; $ref?: string }>;
      }
    >
  >;
};
const withBody = [...bearerRoutes, ...scoreTokenRoutes].filter(
  (route) => spec.paths[route.path][route.method].requestBody,
);

let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  applyTestEnvironment();
  const limits = loadConfig().limits;
  testApp = await createTestApp({
    configOverrides: {
      limits: { ...limits, bodyBytes: 1024, batchBodyBytes: 2048, uploadBytes: 1024 },
      models: { maxBytes: 1024 },
    },
  });
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

function authorized(route: RouteDefinition) {
  const operation = spec.paths[route.path][route.method];
  const needsContext = (operation.parameters ?? []).some((parameter) => parameter.$ref?.endsWith('/Context'));
  const query = new URLSearchParams();
  if (needsContext) query.set('context', user.context());
  if (route.operationId === 'scoreScenario') query.set('name', 'any');
  if (route.operationId === 'loadCollectionData') query.set('fileName', 'f.csv');
  const url = `${sampleUrl(route)}${query.size > 0 ? `?${query}` : ''}`;
  const pending = request(testApp.app)[route.method](url);
  return route.security.includes('bearerAuth')
    ? pending.set('Authorization', `Bearer ${user.accessToken}`)
    : pending.set('Score-Token', user.scoreToken);
}

describe('operations with a request body', () => {
  it('are the ones expected', () => {
    expect(withBody.map((route) => route.operationId).sort()).toEqual([
      'attachShadow',
      'createInputVariablesFromCsv',
      'createSplit',
      'debugScenario',
      'deployScenario',
      'importScenarios',
      'loadCollectionData',
      'promoteSplit',
      'scoreAsync',
      'scoreScenario',
      'startReplay',
      'submitBatch',
      'testModelVersion',
      'updateRecordingSettings',
      'updateScenarioTestCase',
      'uploadModelVersion',
      'validateScenario',
    ]);
  });

  it.each(withBody.map((route) => [route.operationId, route] as const))(
    '%s declares 415 and answers it for a text/plain body',
    async (_id, route) => {
      expect(Object.keys(spec.paths[route.path][route.method].responses)).toContain('415');
      const response = await authorized(route).set('Content-Type', 'text/plain').send('just some text');
      expect(response.status).toBe(415);
      expect(response.body).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    },
  );
});

describe('bodies over the configured limits', () => {
  it.each(withBody.map((route) => [route.operationId, route] as const))(
    '%s declares 413 and answers it',
    async (_id, route) => {
      expect(Object.keys(spec.paths[route.path][route.method].responses)).toContain('413');
      const big = 'x'.repeat(8192);
      const multipart = Object.keys(
        (spec.paths[route.path][route.method].requestBody as { content: Record<string, unknown> }).content,
      ).includes('multipart/form-data');
      const response = multipart
        ? await authorized(route).attach('file', Buffer.from(`a,b\n${big},1\n`), 'big.csv')
        : await authorized(route)
            .set('Content-Type', 'application/json')
            .send(JSON.stringify({ scenarioName: 'x', parameters: [{ pad: big }], pad: big }));
      expect(response.status).toBe(413);
      expect(response.body).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    },
  );
});
