import request from 'supertest';
import { docsExamples } from '../support/docs-examples.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { bearer } from './support/fixtures.js';

let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp();
});
afterAll(async () => testApp.close());

/**
 * The complete scenarios of docs/scenarios.md, imported through the API exactly as written (the YAML text of
 * the block, shortest form, test cases in both forms): they import, validate (their test cases pass), deploy,
 * and score with the documented results. test/engine/docs-examples.test.ts checks every example in the engine.
 */
const complete = docsExamples(new URL('../../docs/scenarios.md', import.meta.url)).examples.filter((example) => example.complete);

describe('docs/scenarios.md through the API', () => {
  it.each(complete.map((example) => [example.title, example] as const))('%s imports as written, validates, deploys and scores as documented', async (_title, example) => {
    const user = await testApp.newUser();
    const post = (path: string) => request(testApp.app).post(path).query({ context: user.context() }).set(bearer(user));
    const imported = await post('/api/scenario/import').set('Content-Type', 'application/yaml').send(example.source);
    expect(imported.status).toBe(200);
    const [{ scenarioId, outcome }] = imported.body.scenarios;
    expect(outcome).toBe('CREATED');
    expect((await post(`/api/scenario/validate/${scenarioId}`)).status).toBe(204);
    expect((await post(`/api/scenario/deploy/${scenarioId}`)).status).toBe(204);
    // runs that meet nothing outside the scenario (no collections, callees or HTTP answers to arrange)
    for (const run of example.runs.filter((r) => !r.collections && !r.scenarios && !r.http && r.result)) {
      const scored = await request(testApp.app).post('/api/scenario/code/remote/score')
        .query({ name: example.document.name as string, key: user.scoreToken }).send(run.given ?? {});
      expect(scored.status).toBe(200);
      expect(scored.body.result).toEqual(run.result);
    }
  });
});
