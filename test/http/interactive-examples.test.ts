import { readFile } from 'node:fs/promises';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import { loadSpec } from '../../src/http/api-docs.js';
import { EXAMPLE_PATH, seedExample, type SeedResult } from '../../src/scenarios/example-seeder.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** What /docs pre-fills: the examples of spec/openapi.json. */
interface Parameter { name: string; example?: unknown }
interface Operation { operationId: string; parameters?: Array<Parameter | { $ref: string }>; requestBody?: { content: Record<string, { example?: unknown }> } }
const spec = loadSpec() as unknown as { paths: Record<string, Record<string, Operation>>; components: { parameters: Record<string, Parameter> } };
const operation = (id: string) => Object.values(spec.paths).flatMap((item) => Object.values(item)).find((candidate) => candidate.operationId === id) as Operation;
const parameterExample = (id: string, name: string) => (operation(id).parameters ?? [])
  .map((parameter) => ('$ref' in parameter ? spec.components.parameters[parameter.$ref.split('/').pop() as string] : parameter))
  .find((parameter) => parameter.name === name)?.example;
const bodyExample = (id: string, mediaType = 'application/json') => operation(id).requestBody?.content[mediaType].example;

/** The query string Swagger UI builds for a deepObject parameter: one `name[key]=value` per key (nothing for {}). */
const deepObjectQuery = (name: string, value: Record<string, unknown>) =>
  Object.entries(value).map(([key, field]) => `${encodeURIComponent(`${name}[${key}]`)}=${encodeURIComponent(typeof field === 'object' ? JSON.stringify(field) : String(field))}`).join('&');

let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp();
});
afterAll(async () => testApp.close());

/** A new user with the example scenario imported and deployed, as `make run` seeds it. */
async function demoUser(): Promise<{ demo: TestUser; seeded: SeedResult }> {
  const demo = await testApp.newUser({ prefix: 'demo' });
  return { demo, seeded: await seedExample(testApp.services, demo.username) };
}

describe('the examples /docs pre-fills work as they are', () => {
  it('Execute on exportScenarios with the default context answers 200', async () => {
    const { demo, seeded } = await demoUser();
    const context = parameterExample('exportScenarios', 'context') as Record<string, unknown>;
    expect(context).toEqual({});
    const query = deepObjectQuery('context', context);
    const response = await request(testApp.app).get(`/api/scenario/export${query ? `?${query}` : ''}`).set('Authorization', `Bearer ${demo.accessToken}`);
    expect(response.status).toBe(200);
    expect(response.body.map((version: { name: string }) => version.name)).toEqual(['credit-decision']);
  });

  it('the score example (name and body) is valid for the example scenario', async () => {
    const { demo, seeded } = await demoUser();
    const response = await request(testApp.app).post('/api/scenario/code/remote/score')
      .query({ name: parameterExample('scoreScenario', 'name') as string })
      .set('Score-Token', demo.scoreToken)
      .send(bodyExample('scoreScenario') as object);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: 'credit-decision', state: 'SUCCEEDED', result: { decision: 'APPROVE' }, error: null });
  });

  it('the debug, validate and batch examples are valid for the example scenario', async () => {
    const { demo, seeded } = await demoUser();
    const bearer = { Authorization: `Bearer ${demo.accessToken}` };
    expect((await request(testApp.app).post(`/api/scenario/debug/${seeded.scenarioId}`).set(bearer).send(bodyExample('debugScenario') as object)).status).toBe(200);
    expect((await request(testApp.app).post(`/api/scenario/validate/${seeded.scenarioId}`).set(bearer).send(bodyExample('validateScenario') as object)).status).toBe(204);
    const batch = await request(testApp.app).post('/api/batch/score').set('Score-Token', demo.scoreToken).send(bodyExample('submitBatch') as object);
    expect(batch.status).toBe(202);
  });

  it('the import example is examples/credit-decision.yaml, and imports for a new user', async () => {
    const document = parseYaml(await readFile(EXAMPLE_PATH, 'utf8')) as unknown;
    expect(bodyExample('importScenarios')).toEqual(document);
    expect(bodyExample('importScenarios', 'application/yaml')).toEqual(document);
    const user = await testApp.newUser();
    const response = await request(testApp.app).post('/api/scenario/import').set('Authorization', `Bearer ${user.accessToken}`).send(bodyExample('importScenarios') as object);
    expect(response.status).toBe(200);
    expect(response.body.scenarios[0]).toMatchObject({ name: 'credit-decision', outcome: 'CREATED' });
  });

  it('the test case example saves over the example scenario\'s first test case', async () => {
    const { demo, seeded } = await demoUser();
    const bearer = { Authorization: `Bearer ${demo.accessToken}` };
    const opened = await request(testApp.app).get(`/api/scenario/open/${seeded.scenarioId}`).set(bearer);
    const response = await request(testApp.app).put(`/api/scenario/${seeded.scenarioId}/testcases/${opened.body.testCases[0].id}`).set(bearer).send(bodyExample('updateScenarioTestCase') as object);
    expect(response.status).toBe(200);
  });
});
