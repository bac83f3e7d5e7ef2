import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, simpleScenario } from './support/fixtures.js';

let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp();
});
afterAll(async () => testApp.close());

const importBody = (user: TestUser, body: unknown) =>
  request(testApp.app)
    .post('/api/scenario/import')
    .query({ context: user.context() })
    .set(bearer(user))
    .send(body as object);

const withVariables = (variables: unknown) => ({
  ...simpleScenario('s'),
  testCases: [{ name: 'typical applicant', variables, expression: { code: 'score === 80' } }],
});

async function storedTestCases(user: TestUser, scenarioId: number) {
  const opened = await request(testApp.app)
    .get(`/api/scenario/open/${scenarioId}`)
    .query({ context: user.context() })
    .set(bearer(user));
  return opened.body.testCases as Array<{ variables: unknown }>;
}

describe('test case variables in an import', () => {
  it.each([
    ['a map from name to value (docs/scenarios.md §7)', { income: 50000, age: 30 }],
    [
      'a list of {variableName, value}',
      [
        { variableName: 'income', value: 50000 },
        { variableName: 'age', value: 30 },
      ],
    ],
    [
      'a list of {name, value} (as exported)',
      [
        { name: 'income', value: 50000 },
        { name: 'age', value: 30 },
      ],
    ],
  ])(
    'accepts %s, stores it as the list of {variableName, value} and the test case passes',
    async (_form, variables) => {
      const user = await testApp.newUser();
      const imported = await importBody(user, withVariables(variables));
      expect(imported.status).toBe(200);
      const { scenarioId } = imported.body.scenarios[0];
      expect((await storedTestCases(user, scenarioId))[0].variables).toEqual([
        { variableName: 'income', value: 50000 },
        { variableName: 'age', value: 30 },
      ]);
      const validated = await request(testApp.app)
        .post(`/api/scenario/validate/${scenarioId}`)
        .query({ context: user.context() })
        .set(bearer(user));
      expect(validated.status).toBe(204);
    },
  );

  it('accepts the map form in YAML exactly as docs/scenarios.md writes it', async () => {
    const user = await testApp.newUser();
    const yaml = `
name: yaml-map
content:
  nodes: [ { id: start, type: START }, { id: calc, type: SCRIPT }, { id: end, type: END } ]
  edges: [ { from: start, to: calc }, { from: calc, to: end } ]
nodeProperties:
  start: { content: { inputs: [ { name: age, type: { type: INTEGER }, required: true } ] } }
  calc: { content: { language: javascript, code: "adult = age >= 18;", outputs: [adult] } }
testCases:
  - name: adult
    variables: { age: 40 }
    expression: { language: javascript, code: 'adult === true' }
`;
    const imported = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .set('Content-Type', 'application/yaml')
      .send(yaml);
    expect(imported.status).toBe(200);
    expect(parseYaml(yaml).nodeProperties.start.type).toBeUndefined();
    expect((await storedTestCases(user, imported.body.scenarios[0].scenarioId))[0].variables).toEqual([
      { variableName: 'age', value: 40 },
    ]);
  });

  it('names the real problem of a bad variables value, without the other forms of the body', async () => {
    const user = await testApp.newUser();
    const response = await importBody(user, withVariables('age=40'));
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([{ path: 'body.testCases.0.variables', message: 'must be array or object' }]);
    expect(response.body.message).not.toMatch(/oneOf|body must be array/);
  });

  it('names the field of a bad list entry, and nothing about the map form or a list body', async () => {
    const user = await testApp.newUser();
    const response = await importBody(
      user,
      withVariables([
        { name: 'income', value: 50000 },
        { name: 'age', val: 30 },
      ]),
    );
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([
      { path: 'body.testCases.0.variables.1.val', message: expect.stringContaining('additional properties') },
    ]);
  });

  it('asks for variableName (or name) when an entry has neither', async () => {
    const user = await testApp.newUser();
    const response = await importBody(user, withVariables([{ value: 30 }]));
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([
      { path: 'body.testCases.0.variables.0.variableName', message: expect.stringContaining('required') },
      { path: 'body.testCases.0.variables.0.name', message: expect.stringContaining('required') },
    ]);
  });

  it('reports a problem inside a list body at its item, not as "body must be object"', async () => {
    const user = await testApp.newUser();
    const response = await importBody(user, [simpleScenario('ok'), withVariables(5)]);
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([
      { path: 'body.1.testCases.0.variables', message: 'must be array or object' },
    ]);
  });
});

describe('test case variables in updateScenarioTestCase', () => {
  it('accepts the map form and answers with the stored list', async () => {
    const user = await testApp.newUser();
    const imported = await importBody(user, simpleScenario('s'));
    const { scenarioId } = imported.body.scenarios[0];
    const [testCase] = (await storedTestCases(user, scenarioId)) as unknown as Array<{ id: string }>;
    const response = await request(testApp.app)
      .put(`/api/scenario/${scenarioId}/testcases/${testCase.id}`)
      .query({ context: user.context() })
      .set(bearer(user))
      .send({ name: 'map form', variables: { income: 1000, age: 18 }, expression: { code: 'score === 19' } });
    expect(response.status).toBe(200);
    expect(response.body.variables).toEqual([
      { variableName: 'income', value: 1000 },
      { variableName: 'age', value: 18 },
    ]);
  });
});
