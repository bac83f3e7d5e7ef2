import { readFileSync } from 'node:fs';
import request from 'supertest';
import { docsExamples } from '../support/docs-examples.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { bearer, simpleScenario } from './support/fixtures.js';

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
const complete = docsExamples(new URL('../../docs/scenarios.md', import.meta.url)).examples.filter(
  (example) => example.complete,
);

describe('docs/scenarios.md through the API', () => {
  it.each(complete.map((example) => [example.title, example] as const))(
    '%s imports as written, validates, deploys and scores as documented',
    async (_title, example) => {
      const user = await testApp.newUser();
      const post = (path: string) =>
        request(testApp.app).post(path).query({ context: user.context() }).set(bearer(user));
      const imported = await post('/api/scenario/import').set('Content-Type', 'application/yaml').send(example.source);
      expect(imported.status).toBe(200);
      const [{ scenarioId, outcome }] = imported.body.scenarios;
      expect(outcome).toBe('CREATED');
      expect((await post(`/api/scenario/validate/${scenarioId}`)).status).toBe(204);
      expect((await post(`/api/scenario/deploy/${scenarioId}`)).status).toBe(204);
      // runs that meet nothing outside the scenario (no collections, callees or HTTP answers to arrange)
      for (const run of example.runs.filter((r) => !r.collections && !r.scenarios && !r.http && r.result)) {
        const scored = await request(testApp.app)
          .post('/api/scenario/code/remote/score')
          .query({ name: example.document.name as string, key: user.scoreToken })
          .send(run.given ?? {});
        expect(scored.status).toBe(200);
        expect(scored.body.result).toEqual(run.result);
      }
    },
  );
});

describe('docs/scenario-management.md through the API', () => {
  const markdown = readFileSync(new URL('../../docs/scenario-management.md', import.meta.url), 'utf8');

  it('reports a scenario that breaks the document schema with the documented detail', async () => {
    const documented = JSON.parse(/```json\n(.*)\n```/.exec(markdown)![1]);
    const bad = simpleScenario('bad');
    bad.content = {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'card', type: 'SCORECARD' },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { from: 'start', to: 'card' },
        { from: 'card', to: 'end' },
      ],
    };
    bad.nodeProperties = {
      start: { content: { inputs: [{ name: 'age', type: { type: 'INTEGER' }, required: true }] } },
      card: {
        content: {
          baseScore: 0,
          characteristics: [
            {
              name: 'Age',
              variable: 'age',
              elsePoints: 0,
              bins: [
                { max: 20, points: 1 },
                { min: 20, max: 40, points: 2 },
                { min: 'forty', points: 3 },
              ],
            },
          ],
        },
      },
    } as never;
    bad.testCases = [];
    const user = await testApp.newUser();
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .send([simpleScenario('good'), bad]);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_SCENARIO');
    expect(response.body.details).toContainEqual(documented);
  });

  it('saves a test case with the documented updateScenarioTestCase body', async () => {
    const body = JSON.parse(/testcases\/31\?\$CTX" [^\n]*\n\s+-d '([^']*)'/.exec(markdown)![1]);
    const user = await testApp.newUser();
    const imported = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .send(simpleScenario('s'));
    const { scenarioId } = imported.body.scenarios[0];
    const opened = await request(testApp.app)
      .get(`/api/scenario/open/${scenarioId}`)
      .query({ context: user.context() })
      .set(bearer(user));
    const [testCase] = opened.body.testCases;
    // the documented body names test case 31; here it is the one just imported
    const saved = await request(testApp.app)
      .put(`/api/scenario/${scenarioId}/testcases/${testCase.id}`)
      .query({ context: user.context() })
      .set(bearer(user))
      .send({ ...body, id: testCase.externalId });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      name: 'approved',
      variables: [
        { variableName: 'income', value: 52000 },
        { variableName: 'age', value: 34 },
      ],
    });
  });
});
