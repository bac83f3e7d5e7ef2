import { readFile } from 'node:fs/promises';
import request from 'supertest';
import { EXAMPLE_PATH, seedExample } from '../../src/scenarios/example-seeder.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { bearer } from './support/fixtures.js';

let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp();
});
afterAll(async () => testApp.close());

describe('examples/credit-decision.yaml', () => {
  it('imports as YAML, validates (both test cases pass), debugs and deploys', async () => {
    const user = await testApp.newUser();
    const yaml = await readFile(EXAMPLE_PATH, 'utf8');
    const imported = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .set('Content-Type', 'application/yaml')
      .send(yaml);
    expect(imported.status).toBe(200);
    const [{ scenarioId, outcome }] = imported.body.scenarios;
    expect(outcome).toBe('CREATED');
    const post = (path: string) => request(testApp.app).post(path).query({ context: user.context() }).set(bearer(user));
    const validated = await post(`/api/scenario/validate/${scenarioId}`);
    expect(validated.status).toBe(204);
    const debug = await post(`/api/scenario/debug/${scenarioId}`).send({
      income: 52000,
      existingDebt: 4000,
      age: 34,
      employment: 'EMPLOYED',
    });
    expect(debug.status).toBe(200);
    expect(debug.body.result).toMatchObject({ decision: 'APPROVE', riskBand: 'LOW', creditLimit: 10000 });
    expect((await post(`/api/scenario/deploy/${scenarioId}`)).status).toBe(204);
  });
});

describe('seedExample', () => {
  it('creates the user, imports and deploys the example, and changes nothing when run again', async () => {
    const username = `demo-${Date.now()}`;
    const first = await seedExample(testApp.services, username);
    expect(first).toMatchObject({
      username,
      scenarioName: 'credit-decision',
      version: '1',
      deployed: true,
      scoreToken: expect.any(String),
    });
    const second = await seedExample(testApp.services, username);
    expect(second).toMatchObject({ scenarioId: first.scenarioId, version: '1', deployed: false });
    const owner = await testApp.services.users.findByUsername(username);
    const deployed = await testApp.services.deployedScenarios.find(owner!.id, 'credit-decision');
    expect(deployed?.version).toBe('1');
  });
});
