import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, createScenario, everyNodeScenario, importAs, simpleScenario } from './support/fixtures.js';

let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp();
});
afterAll(async () => testApp.close());

const post = (path: string, user: TestUser, query: Record<string, unknown> = {}) =>
  request(testApp.app)
    .post(path)
    .query({ context: user.context(), ...query })
    .set(bearer(user));
const versionsOf = async (id: string, user: TestUser) =>
  (
    await request(testApp.app).get(`/api/scenario/${id}/version`).query({ context: user.context() }).set(bearer(user))
  ).body.map((v: { version: string }) => v.version);

describe('validateScenario', () => {
  it('answers 204 when the scenario compiles and every test case passes', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('ok'));
    expect((await post(`/api/scenario/validate/${id}`, user)).status).toBe(204);
  });

  it('runs the optional validation data once: 204 when it runs, 422 naming each input violation', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('ok'));
    expect((await post(`/api/scenario/validate/${id}`, user).send({ income: 1000, age: 20 })).status).toBe(204);
    const bad = await post(`/api/scenario/validate/${id}`, user).send({ income: 'lots' });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('VALIDATION_ERRORS');
    expect(bad.body.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'body.income', variable: 'income', code: 'INVALID_INPUT' }),
        expect.objectContaining({ path: 'body.age', variable: 'age', code: 'INVALID_INPUT' }),
      ]),
    );
  });

  it('answers 422 listing a failing test case with its actual result and expected expression', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('failing', { testExpression: 'score === 81' }));
    const response = await post(`/api/scenario/validate/${id}`, user);
    expect(response.status).toBe(422);
    expect(response.body.details).toEqual([
      expect.objectContaining({
        path: 'testCases[0]',
        code: 'TEST_CASE_FAILED',
        testCaseName: 'typical applicant',
        expected: 'score === 81',
        actual: { score: 80 },
      }),
    ]);
  });

  it('answers 422 with compile diagnostics naming the node', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('broken', { code: 'score = income +;' }));
    const response = await post(`/api/scenario/validate/${id}`, user);
    expect(response.status).toBe(422);
    expect(response.body.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ nodeId: 'calc', code: expect.any(String) })]),
    );
  });

  it('reports external references that do not resolve (collections, called scenarios)', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, everyNodeScenario('all'));
    const response = await post(`/api/scenario/validate/${id}`, user);
    expect(response.status).toBe(422);
    const nodes = response.body.details.map((d: { nodeId?: string }) => d.nodeId);
    expect(nodes).toContain('lookup');
  });

  it('runs a test case saved with updateScenarioTestCase', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('tc'));
    const opened = await request(testApp.app)
      .get(`/api/scenario/open/${id}`)
      .query({ context: user.context() })
      .set(bearer(user));
    const testCaseId = opened.body.testCases[0].id;
    const save = (code: string) =>
      request(testApp.app)
        .put(`/api/scenario/${id}/testcases/${testCaseId}`)
        .query({ context: user.context() })
        .set(bearer(user))
        .send({
          id: Number(testCaseId),
          name: 'edited',
          variables: [
            { name: 'income', value: 10000 },
            { name: 'age', value: 20 },
          ],
          expression: { code },
        });
    expect((await save('score === 99')).status).toBe(200);
    const failing = await post(`/api/scenario/validate/${id}`, user);
    expect(failing.status).toBe(422);
    expect(failing.body.details[0]).toMatchObject({ testCaseName: 'edited', actual: { score: 30 } });
    expect((await save('score === 30')).status).toBe(200);
    expect((await post(`/api/scenario/validate/${id}`, user)).status).toBe(204);
  });

  it('skips test cases marked ignore', async () => {
    const user = await testApp.newUser();
    const item = simpleScenario('ignored', { testExpression: 'false' });
    (item.testCases![0] as { ignore: boolean }).ignore = true;
    const id = await createScenario(testApp, user, item);
    expect((await post(`/api/scenario/validate/${id}`, user)).status).toBe(204);
  });

  it('answers 401, 403, 404 and 413 as documented', async () => {
    const user = await testApp.newUser();
    const stranger = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('ok'));
    expect(
      (await request(testApp.app).post(`/api/scenario/validate/${id}`).query({ context: user.context() })).status,
    ).toBe(401);
    expect((await post(`/api/scenario/validate/${id}`, stranger)).status).toBe(403);
    expect((await post('/api/scenario/validate/2000000000', user)).status).toBe(404);
    expect(
      (await post(`/api/scenario/validate/${id}`, user).send({ big: 'x'.repeat(testApp.config.limits.bodyBytes + 1) }))
        .status,
    ).toBe(413);
  });
});

describe('debugScenario', () => {
  it('runs the opened version with a trace', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('dbg'));
    const response = await post(`/api/scenario/debug/${id}`, user).send({ income: 50000, age: 30 });
    expect(response.status).toBe(200);
    expect(response.body.version).toBe('develop');
    expect(response.body.result).toEqual({ score: 80 });
    expect(response.body.trace.map((t: { nodeId: string }) => t.nodeId)).toEqual(expect.arrayContaining(['calc']));
  });

  it('answers 400 INVALID_INPUT naming each bad input', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('dbg'));
    const response = await post(`/api/scenario/debug/${id}`, user).send({ income: 'x', age: 1.5 });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_INPUT');
    expect(response.body.details.map((d: { variable: string }) => d.variable).sort()).toEqual(['age', 'income']);
  });

  it('takes the debugging data as optional: without a body the run has no inputs (400 naming the required ones)', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('dbg'));
    const response = await post(`/api/scenario/debug/${id}`, user);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_INPUT');
    expect(response.body.details.map((d: { variable: string }) => d.variable).sort()).toEqual(['age', 'income']);
  });

  it('answers 422 COMPILE_ERROR when the version does not compile and 422 RUN_FAILED when the run fails', async () => {
    const user = await testApp.newUser();
    const broken = await createScenario(testApp, user, simpleScenario('broken', { code: 'score = income +;' }));
    const compile = await post(`/api/scenario/debug/${broken}`, user).send({ income: 1, age: 1 });
    expect(compile.status).toBe(422);
    expect(compile.body.code).toBe('COMPILE_ERROR');
    const throwing = await createScenario(
      testApp,
      user,
      simpleScenario('throws', { code: 'throw new Error("boom"); score = 1;' }),
    );
    const run = await post(`/api/scenario/debug/${throwing}`, user).send({ income: 1, age: 1 });
    expect(run.status).toBe(422);
    expect(run.body.code).toBe('RUN_FAILED');
    expect(run.body.details[0].nodeId).toBe('calc');
  });

  it('answers 401, 403, 404 and 413 as documented', async () => {
    const user = await testApp.newUser();
    const stranger = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('dbg'));
    expect(
      (await request(testApp.app).post(`/api/scenario/debug/${id}`).query({ context: user.context() }).send({})).status,
    ).toBe(401);
    expect((await post(`/api/scenario/debug/${id}`, stranger).send({ income: 1, age: 1 })).status).toBe(403);
    expect((await post('/api/scenario/debug/2000000000', user).send({})).status).toBe(404);
    expect(
      (await post(`/api/scenario/debug/${id}`, user).send({ big: 'x'.repeat(testApp.config.limits.bodyBytes + 1) }))
        .status,
    ).toBe(413);
  });
});

describe('deployScenario', () => {
  it('validates, creates deployed version 1 from develop (204) and scoring sees it at once', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('dep'));
    expect(await testApp.services.deployedScenarios.find(user.id, 'dep')).toBeNull();
    expect((await post(`/api/scenario/deploy/${id}`, user)).status).toBe(204);
    expect(await versionsOf(id, user)).toEqual(['develop', '1']);
    expect((await testApp.services.deployedScenarios.find(user.id, 'dep'))?.version).toBe('1');
  });

  it('answers 422 and changes nothing when validation fails; skip_validation deploys anyway', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('dep', { testExpression: 'score === 0' }));
    const refused = await post(`/api/scenario/deploy/${id}`, user);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('VALIDATION_ERRORS');
    expect(await versionsOf(id, user)).toEqual(['develop']);
    expect((await post(`/api/scenario/deploy/${id}`, user, { skip_validation: true })).status).toBe(204);
    expect(await versionsOf(id, user)).toEqual(['develop', '1']);
  });

  it('runs the optional validation data of the body before deploying: 422 naming each violation and nothing deployed, 204 when it runs', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('dep'));
    const refused = await post(`/api/scenario/deploy/${id}`, user).send({ income: 'lots', age: 30 });
    expect(refused.status).toBe(422);
    expect(refused.body.details).toEqual([expect.objectContaining({ path: 'body.income', code: 'INVALID_INPUT' })]);
    expect(await versionsOf(id, user)).toEqual(['develop']);
    expect((await post(`/api/scenario/deploy/${id}`, user).send({ income: 50000, age: 30 })).status).toBe(204);
    expect(await versionsOf(id, user)).toEqual(['develop', '1']);
  });

  it('reads an empty body as no validation data, whatever its content type (orval sends application/json with none)', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('empty-body'));
    // `{}` as validation data is a run without the required inputs (422); an empty body is none at all.
    expect(
      (await post(`/api/scenario/validate/${id}`, user).set('Content-Type', 'application/json').send('')).status,
    ).toBe(204);
    expect(
      (await post(`/api/scenario/deploy/${id}`, user).set('Content-Type', 'application/json').send('')).status,
    ).toBe(204);
    expect(await versionsOf(id, user)).toEqual(['develop', '1']);
    expect((await post(`/api/scenario/validate/${id}`, user).send({})).status).toBe(422);
    // An operation that needs a body says it is missing.
    const noImport = await post('/api/scenario/import', user).set('Content-Type', 'application/json').send('');
    expect(noImport.status).toBe(400);
    expect(noImport.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'body is required (application/json, application/yaml)',
      details: [{ path: 'body' }],
    });
    // A body of a type the operation does not take is 415 naming what it takes.
    const yamlOnly = await post('/api/scenario/import', user).set('Content-Type', 'text/csv').send('a,b\n1,2\n');
    expect(yamlOnly.status).toBe(415);
    expect(yamlOnly.body.message).toBe(
      `POST /api/scenario/import takes application/json, application/yaml; the request's Content-Type is "text/csv".`,
    );
  });

  it('answers 422 COMPILE_ERROR with skip_validation when the document does not compile', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('dep', { code: 'score = income +;' }));
    const response = await post(`/api/scenario/deploy/${id}`, user, { skip_validation: true });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('COMPILE_ERROR');
    expect(await versionsOf(id, user)).toEqual(['develop']);
  });

  it('gives concurrent deploys distinct, consecutive labels', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('busy'));
    const responses = await Promise.all([1, 2, 3, 4, 5].map(() => post(`/api/scenario/deploy/${id}`, user)));
    expect(responses.map((r) => r.status)).toEqual([204, 204, 204, 204, 204]);
    expect(await versionsOf(id, user)).toEqual(['develop', '5', '4', '3', '2', '1']);
    const [next] = await importAs(testApp, user, simpleScenario('busy'), { overwrite_deploy: true });
    expect(next.version).toBe('6');
  });

  it('answers 409 when the scenario has no development version', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('nodev'));
    await post(`/api/scenario/deploy/${id}`, user).expect(204);
    await testApp.services.db('scenario_versions').where({ scenario_id: id, status: 'DEVELOP' }).delete();
    expect((await post(`/api/scenario/deploy/${id}`, user)).status).toBe(409);
    expect(await versionsOf(id, user)).toEqual(['1']);
  });

  it('answers 401, 403 and 404 as documented, and lets an admin deploy any scenario', async () => {
    const user = await testApp.newUser();
    const stranger = await testApp.newUser();
    const admin = await testApp.newUser({ admin: true });
    const id = await createScenario(testApp, user, simpleScenario('dep'));
    expect(
      (await request(testApp.app).post(`/api/scenario/deploy/${id}`).query({ context: user.context() })).status,
    ).toBe(401);
    expect((await post(`/api/scenario/deploy/${id}`, stranger)).status).toBe(403);
    expect((await post('/api/scenario/deploy/2000000000', user)).status).toBe(404);
    expect((await post(`/api/scenario/deploy/${id}`, admin)).status).toBe(204);
    expect(await versionsOf(id, user)).toEqual(['develop', '1']);
  });
});
