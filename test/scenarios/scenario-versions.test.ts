import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, createScenario, everyNodeScenario, importAs, simpleScenario } from './support/fixtures.js';

let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp();
});
afterAll(async () => testApp.close());

const get = (path: string, user: TestUser, context = user.context()) =>
  request(testApp.app).get(path).query({ context }).set(bearer(user));
const post = (path: string, user: TestUser, query: Record<string, unknown> = {}) =>
  request(testApp.app)
    .post(path)
    .query({ context: user.context(), ...query })
    .set(bearer(user));

/** The id-addressed read operations share their access rules. */
const reads: Array<[string, (id: string) => string]> = [
  ['openScenario', (id) => `/api/scenario/open/${id}`],
  ['listScenarioVersions', (id) => `/api/scenario/${id}/version`],
  ['getScenarioInput', (id) => `/api/scenario/${id}/input`],
  ['getScenarioInputVariableNames', (id) => `/api/scenario/data/inputvariables/${id}`],
];

describe.each(reads)('%s access', (_operation, path) => {
  it('answers 401 without a token', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('s'));
    expect((await request(testApp.app).get(path(id)).query({ context: user.context() })).status).toBe(401);
  });

  it('answers 403 FORBIDDEN for a scenario of another user', async () => {
    const owner = await testApp.newUser();
    const stranger = await testApp.newUser();
    const id = await createScenario(testApp, owner, simpleScenario('s'));
    const response = await get(path(id), stranger);
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });

  it('lets an admin act on any scenario id', async () => {
    const owner = await testApp.newUser();
    const admin = await testApp.newUser({ admin: true });
    const id = await createScenario(testApp, owner, simpleScenario('s'));
    expect((await get(path(id), admin)).status).toBe(200);
    expect((await get(path(id), admin, admin.context(owner.username))).status).toBe(200);
  });

  it('answers 404 SCENARIO_NOT_FOUND for an unknown id and for any string that is not one of our ids', async () => {
    const user = await testApp.newUser();
    for (const id of [
      '2000000000',
      '0',
      '007',
      'abc',
      '64f1c2a9e4b0d1a2b3c4d5e6',
      '99999999999999999999',
      '-1',
      '1.5',
    ]) {
      const missing = await get(path(encodeURIComponent(id)), user);
      expect([id, missing.status, missing.body.code]).toEqual([id, 404, 'SCENARIO_NOT_FOUND']);
    }
  });
});

describe('openScenario', () => {
  it('returns the development version if any, else the latest deployed', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('s'));
    expect((await get(`/api/scenario/open/${id}`, user)).body).toMatchObject({
      version: 'develop',
      status: 'DEVELOP',
      scenarioId: id,
      userId: String(user.id),
      owner: user.username,
    });
    await post(`/api/scenario/deploy/${id}`, user).expect(204);
    await post(`/api/scenario/deploy/${id}`, user).expect(204);
    await testApp.services.db('scenario_versions').where({ scenario_id: id, status: 'DEVELOP' }).delete();
    expect((await get(`/api/scenario/open/${id}`, user)).body).toMatchObject({
      version: '2',
      status: 'DEPLOYED',
      sourceVersion: 'develop',
    });
  });
});

describe('listScenarioVersions', () => {
  it('lists develop first, then deployed versions newest first', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('s'));
    await post(`/api/scenario/deploy/${id}`, user).expect(204);
    // Passes the test case (score === 80), so import-deploy's validation lets it through.
    await importAs(testApp, user, simpleScenario('s', { code: 'score = 80;' }), { overwrite_deploy: true });
    await post(`/api/scenario/deploy/${id}`, user).expect(204);
    const response = await get(`/api/scenario/${id}/version`, user);
    expect(response.status).toBe(200);
    expect(response.body.map((v: Record<string, unknown>) => [v.version, v.status, v.sourceVersion])).toEqual([
      ['develop', 'DEVELOP', 'import'],
      ['3', 'DEPLOYED', 'develop'],
      ['2', 'DEPLOYED', 'import'],
      ['1', 'DEPLOYED', 'develop'],
    ]);
    expect(response.body[0]).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      scenarioId: id,
      name: 's',
      version: 'develop',
      sourceVersion: 'import',
      description: 'income and age to a score',
      status: 'DEVELOP',
      createdAt: expect.any(String),
    });
  });
});

describe('getScenarioInput and getScenarioInputVariableNames', () => {
  it('return the START node inputs of the opened version by name, and their names in order', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, everyNodeScenario('all'));
    const inputs = await get(`/api/scenario/${id}/input`, user);
    expect(inputs.status).toBe(200);
    expect(inputs.body.channel).toEqual({
      name: 'channel',
      type: { type: 'DICTIONARY', name: 'channel', options: ['WEB', 'BRANCH'] },
      required: true,
    });
    expect(inputs.body.customerId).toEqual({
      name: 'customerId',
      type: { type: 'STRING' },
      required: true,
      tags: ['id'],
    });
    const names = await get(`/api/scenario/data/inputvariables/${id}`, user);
    expect(names.body).toEqual(['customerId', 'income', 'age', 'student', 'channel', 'extra', 'history']);
  });
});

describe('copyScenario', () => {
  it('creates a new scenario (200) whose develop version copies the opened version and the test cases', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('source'));
    const response = await post(`/api/scenario/copy/${id}/the copy`, user);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'the copy',
      version: 'develop',
      status: 'DEVELOP',
      sourceVersion: 'copy',
      owner: user.username,
    });
    expect(response.body.scenarioId).not.toBe(id);
    const source = (await get(`/api/scenario/open/${id}`, user)).body;
    expect(response.body.content).toBe(source.content);
    expect(response.body.nodeProperties).toEqual(source.nodeProperties);
    const withoutIds = (testCases: Record<string, unknown>[]) =>
      testCases.map(({ id: _id, externalId: _externalId, ...rest }) => rest);
    expect(withoutIds(response.body.testCases)).toEqual(withoutIds(source.testCases));
    expect(response.body.testCases[0].id).not.toBe(source.testCases[0].id);
  });

  it('answers 409 NAME_TAKEN when the owner has the name, also for concurrent copies', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('source'));
    const taken = await post(`/api/scenario/copy/${id}/source`, user);
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('NAME_TAKEN');
    const statuses = (await Promise.all([1, 2, 3, 4].map(() => post(`/api/scenario/copy/${id}/racing`, user))))
      .map((r) => r.status)
      .sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
  });

  it("answers 404 for an unknown source, 403 for another user's, 400 for a bad name, 401 without a token", async () => {
    const user = await testApp.newUser();
    const stranger = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('source'));
    expect((await post('/api/scenario/copy/2000000000/x', user)).status).toBe(404);
    expect((await post(`/api/scenario/copy/${id}/x`, stranger)).status).toBe(403);
    expect((await post(`/api/scenario/copy/${id}/-bad`, user)).status).toBe(400);
    expect(
      (await request(testApp.app).post(`/api/scenario/copy/${id}/x`).query({ context: user.context() })).status,
    ).toBe(401);
  });
});

describe('renameScenario', () => {
  it('renames the scenario (200 ScenarioSummary); scoring then finds it under the new name', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('old'));
    await post(`/api/scenario/deploy/${id}`, user).expect(204);
    expect(await testApp.services.deployedScenarios.find(user.id, 'old')).not.toBeNull();
    const response = await post('/api/scenario/rename/old/new', user);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id, name: 'new', owner: user.username });
    expect(await testApp.services.deployedScenarios.find(user.id, 'old')).toBeNull();
    expect((await testApp.services.deployedScenarios.find(user.id, 'new'))?.scenarioId).toBe(Number(id));
  });

  it('answers 409 NAME_TAKEN when the new name is taken, also under concurrency', async () => {
    const user = await testApp.newUser();
    await importAs(testApp, user, [simpleScenario('a'), simpleScenario('b'), simpleScenario('c')]);
    const taken = await post('/api/scenario/rename/a/b', user);
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('NAME_TAKEN');
    const statuses = (
      await Promise.all([post('/api/scenario/rename/a/z', user), post('/api/scenario/rename/c/z', user)])
    )
      .map((r) => r.status)
      .sort();
    expect(statuses).toEqual([200, 409]);
  });

  it("answers 404 when the owner has no such scenario (another user's name does not count), 403 for another owner, 401 without a token", async () => {
    const user = await testApp.newUser();
    const other = await testApp.newUser();
    await createScenario(testApp, other, simpleScenario('theirs'));
    const missing = await post('/api/scenario/rename/theirs/mine', user);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('SCENARIO_NOT_FOUND');
    expect(
      (
        await request(testApp.app)
          .post('/api/scenario/rename/theirs/mine')
          .query({ context: user.context(other.username) })
          .set(bearer(user))
      ).status,
    ).toBe(403);
    expect(
      (await request(testApp.app).post('/api/scenario/rename/a/b').query({ context: user.context() })).status,
    ).toBe(401);
  });

  it("lets an admin rename another owner's scenario through context.owner", async () => {
    const user = await testApp.newUser();
    const admin = await testApp.newUser({ admin: true });
    await createScenario(testApp, user, simpleScenario('mine'));
    const response = await request(testApp.app)
      .post('/api/scenario/rename/mine/renamed')
      .query({ context: admin.context(user.username) })
      .set(bearer(admin));
    expect(response.status).toBe(200);
    expect(response.body.owner).toBe(user.username);
  });
});
