import request from 'supertest';
import { ConflictError } from '../../src/errors/conflict-error.js';
import { ERROR_CODES } from '../../src/errors/error-codes.js';
import { loadSpec } from '../../src/http/api-docs.js';
import { outsideTheContract } from '../support/outside-the-contract.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import express from 'express';
import { createDatabase, ensureDatabaseExists } from '../../src/db/database.js';
import { healthRouter } from '../../src/http/health-router.js';
import { healthChecks } from '../../src/services.js';

let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  testApp = await createTestApp({
    // A handler that breaks the contract: the spec promises an array of CollectionInfo.
    handlers: {
      listCollections: outsideTheContract(async () => ({ status: 200, body: { not: 'an array' } })),
      // An error the operation does not declare (getCollectionColumns has no 409).
      getCollectionColumns: async () => {
        throw new ConflictError('not declared here');
      },
    },
  });
  user = await testApp.newUser();
});
afterAll(async () => testApp.close());

describe('the contract', () => {
  it('serves an OpenAPI 3.1.0 document with all 53 operations at /openapi.json', async () => {
    const response = await request(testApp.app).get('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(response.body.info.version).toBe('1.9');
    const operations = Object.values(response.body.paths as Record<string, object>).flatMap((item) =>
      Object.keys(item),
    );
    expect(operations).toHaveLength(53);
  });

  it('serves the interactive view at /docs', async () => {
    const response = await request(testApp.app).get('/docs').redirects(1);
    expect(response.status).toBe(200);
    expect(response.text).toMatch(/swagger/i);
  });

  it('declares 400, 401 and 431 on every operation', () => {
    const spec = loadSpec() as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
    };
    for (const item of Object.values(spec.paths)) {
      for (const operation of Object.values(item)) {
        expect({ operation: operation.operationId, statuses: Object.keys(operation.responses) }).toEqual({
          operation: operation.operationId,
          statuses: expect.arrayContaining(['400', '401', '431']),
        });
      }
    }
  });

  it('declares 403 and 404 on every operation that takes a context (an owner may be refused or not exist)', () => {
    const spec = loadSpec() as {
      paths: Record<
        string,
        Record<
          string,
          { operationId: string; parameters?: Array<{ $ref?: string }>; responses: Record<string, unknown> }
        >
      >;
    };
    const withContext = Object.values(spec.paths)
      .flatMap((item) => Object.values(item))
      .filter((operation) => (operation.parameters ?? []).some((parameter) => parameter.$ref?.endsWith('/Context')));
    expect(withContext.length).toBeGreaterThan(10);
    for (const operation of withContext)
      expect([operation.operationId, Object.keys(operation.responses)]).toEqual([
        operation.operationId,
        expect.arrayContaining(['403', '404']),
      ]);
  });

  it('bounds every integer a client sends (parameters and request bodies) with a minimum and a maximum', () => {
    type Schema = Record<string, unknown>;
    const spec = loadSpec() as {
      paths: Record<string, Record<string, Schema>>;
      components: { schemas: Record<string, Schema>; parameters: Record<string, Schema> };
    };
    const unbounded: string[] = [];
    const seen = new Set<string>();
    // An explicit stack: schemas refer to one another.
    const stack: Array<{ schema: unknown; path: string }> = [];
    const resolve = (node: Schema, group: 'schemas' | 'parameters'): Schema => {
      const ref = node.$ref;
      return typeof ref === 'string' ? spec.components[group][ref.split('/').pop() as string] : node;
    };
    for (const [path, item] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of (operation.parameters ?? []) as Schema[]) {
          const resolved = resolve(parameter, 'parameters');
          stack.push({
            schema: resolved.schema ?? resolved.content,
            path: `${method} ${path} ${String(resolved.name)}`,
          });
        }
        stack.push({ schema: (operation.requestBody as Schema | undefined)?.content, path: `${method} ${path} body` });
      }
    }
    while (stack.length > 0) {
      const { schema, path } = stack.pop() as { schema: unknown; path: string };
      if (schema === null || typeof schema !== 'object') continue;
      const node = schema as Schema;
      if (typeof node.$ref === 'string') {
        if (!seen.has(node.$ref)) {
          seen.add(node.$ref);
          stack.push({ schema: resolve(node, 'schemas'), path: node.$ref });
        }
        continue;
      }
      const types = Array.isArray(node.type) ? node.type : [node.type];
      if (types.includes('integer') && (node.minimum === undefined || node.maximum === undefined)) unbounded.push(path);
      for (const [key, child] of Object.entries(node))
        if (typeof child === 'object') stack.push({ schema: child, path: `${path}.${key}` });
    }
    expect(unbounded).toEqual([]);
  });

  it('lists exactly the error codes the code uses', () => {
    const spec = loadSpec() as { components: { schemas: { ErrorCode: { enum: string[] } } } };
    expect(spec.components.schemas.ErrorCode.enum).toEqual([...ERROR_CODES]);
  });

  it('turns an error the operation does not declare into a JSON 500, never an HTML page', async () => {
    const response = await request(testApp.app)
      .get('/api/internaldata/columns/anything')
      .set('Authorization', `Bearer ${user.accessToken}`);
    expect(response.status).toBe(500);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
  });

  it('turns a response that breaks the spec into a failure', async () => {
    const response = await request(testApp.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${user.accessToken}`);
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

  it('answers 503 naming npm run migrate when MySQL answers but its database lacks a migration', async () => {
    const url = new URL(testApp.config.databaseUrl);
    url.pathname = `/${url.pathname.slice(1)}_ready_empty`;
    await ensureDatabaseExists(url.toString());
    const empty = createDatabase(url.toString(), { min: 0, max: 1 });
    try {
      const app = express().use(healthRouter(healthChecks({ ...testApp.services, db: empty })));
      const response = await request(app).get('/health/ready');
      expect(response.status).toBe(503);
      expect(response.body.checks.database).toMatch(
        /^unavailable: not migrated \(\d+ migrations not applied, from 20\d+_\w+\): run npm run migrate$/,
      );
    } finally {
      await empty.raw('DROP DATABASE IF EXISTS ??', [url.pathname.slice(1)]);
      await empty.destroy();
    }
  });
});
