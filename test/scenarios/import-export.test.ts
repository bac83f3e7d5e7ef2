import request from 'supertest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { bearer, everyNodeScenario, importAs, simpleScenario } from './support/fixtures.js';

let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp();
});
afterAll(async () => testApp.close());

const exportOf = (user: Awaited<ReturnType<TestApp['newUser']>>, query: Record<string, string> = {}) =>
  request(testApp.app)
    .get('/api/scenario/export')
    .query({ context: user.context(), ...query })
    .set(bearer(user));

/** The parts of an exported version that an import must reproduce. */
const portable = (versions: Record<string, unknown>[]) =>
  versions.map(({ name, description, content, nodeProperties, testCases }) => ({
    name,
    description,
    content,
    nodeProperties,
    testCases: (testCases as Record<string, unknown>[]).map(({ id: _id, externalId: _externalId, ...rest }) => rest),
  }));

describe('importScenarios', () => {
  it('creates a new scenario with a development version and its test cases (content given as objects)', async () => {
    const user = await testApp.newUser();
    const outcomes = await importAs(testApp, user, simpleScenario('simple'));
    expect(outcomes).toEqual([
      { name: 'simple', scenarioId: expect.stringMatching(/^[1-9][0-9]*$/), outcome: 'CREATED' },
    ]);
    const opened = await request(testApp.app)
      .get(`/api/scenario/open/${outcomes[0].scenarioId}`)
      .query({ context: user.context() })
      .set(bearer(user));
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({
      name: 'simple',
      owner: user.username,
      version: 'develop',
      status: 'DEVELOP',
      sourceVersion: 'import',
      description: 'income and age to a score',
    });
    expect(typeof opened.body.content).toBe('string');
    expect(JSON.parse(opened.body.nodeProperties.calc.content)).toMatchObject({ code: 'score = income / 1000 + age;' });
    const [testCase] = opened.body.testCases;
    expect(opened.body.testCases).toEqual([
      {
        id: String(testCase.externalId),
        externalId: expect.any(Number),
        name: 'typical applicant',
        variables: [
          { variableName: 'income', value: 50000 },
          { variableName: 'age', value: 30 },
        ],
        expression: { code: 'score === 80', language: 'javascript' },
        ignore: false,
      },
    ]);
  });

  it('imports a list given as YAML, reporting outcomes in input order', async () => {
    const user = await testApp.newUser();
    const yaml = toYaml([simpleScenario('b-second'), simpleScenario('a-first')]);
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .set('Content-Type', 'application/yaml')
      .send(yaml);
    expect(response.status).toBe(200);
    expect(response.body.scenarios.map((o: { name: string; outcome: string }) => [o.name, o.outcome])).toEqual([
      ['b-second', 'CREATED'],
      ['a-first', 'CREATED'],
    ]);
  });

  it('skips an existing scenario without switches and leaves it untouched', async () => {
    const user = await testApp.newUser();
    await importAs(testApp, user, simpleScenario('s'));
    const before = (await exportOf(user)).body;
    const outcomes = await importAs(testApp, user, simpleScenario('s', { code: 'score = 1;' }));
    expect(outcomes[0].outcome).toBe('SKIPPED');
    expect((await exportOf(user)).body).toEqual(before);
  });

  it('overwrite_develop replaces the development version and the test cases (UPDATED)', async () => {
    const user = await testApp.newUser();
    const [created] = await importAs(testApp, user, simpleScenario('s'));
    const changed = { ...simpleScenario('s', { code: 'score = age;', testExpression: 'score === 30' }), testCases: [] };
    const [updated] = await importAs(testApp, user, changed, { overwrite_develop: true });
    expect(updated).toEqual({ name: 's', scenarioId: created.scenarioId, outcome: 'UPDATED' });
    const [exported] = (await exportOf(user)).body;
    expect(JSON.parse(exported.nodeProperties.calc.content).code).toBe('score = age;');
    expect(exported.testCases).toEqual([]);
    const versions = await request(testApp.app)
      .get(`/api/scenario/${created.scenarioId}/version`)
      .query({ context: user.context() })
      .set(bearer(user));
    expect(versions.body.map((v: { version: string }) => v.version)).toEqual(['develop']);
  });

  it('overwrite_deploy creates a deployed version from the imported content and leaves develop alone (DEPLOYED)', async () => {
    const user = await testApp.newUser();
    const [created] = await importAs(testApp, user, simpleScenario('s'));
    // Still passes the scenario's test case (score === 80 for income 50000, age 30), so validation lets it deploy.
    const [deployed] = await importAs(testApp, user, simpleScenario('s', { code: 'score = 80;' }), {
      overwrite_deploy: true,
    });
    expect(deployed).toEqual({ name: 's', scenarioId: created.scenarioId, outcome: 'DEPLOYED', version: '1' });
    const versions = await request(testApp.app)
      .get(`/api/scenario/${created.scenarioId}/version`)
      .query({ context: user.context() })
      .set(bearer(user));
    expect(
      versions.body.map((v: { version: string; sourceVersion: string; status: string }) => [
        v.version,
        v.status,
        v.sourceVersion,
      ]),
    ).toEqual([
      ['develop', 'DEVELOP', 'import'],
      ['1', 'DEPLOYED', 'import'],
    ]);
    const [exported] = (await exportOf(user)).body;
    expect(JSON.parse(exported.nodeProperties.calc.content).code).toBe('score = income / 1000 + age;');
    const live = await testApp.services.deployedScenarios.find(user.id, 's');
    expect(JSON.parse(live!.document.nodeProperties.calc.content).code).toBe('score = 80;');
  });

  it('with both switches replaces develop and deploys (UPDATED_AND_DEPLOYED)', async () => {
    const user = await testApp.newUser();
    await importAs(testApp, user, simpleScenario('s'));
    await importAs(testApp, user, simpleScenario('s'), { overwrite_deploy: true });
    const [both] = await importAs(
      testApp,
      user,
      simpleScenario('s', { code: 'score = 9;', testExpression: 'score === 9' }),
      { overwrite_develop: true, overwrite_deploy: true },
    );
    expect(both).toMatchObject({ outcome: 'UPDATED_AND_DEPLOYED', version: '2' });
    const [exported] = (await exportOf(user)).body;
    expect(JSON.parse(exported.nodeProperties.calc.content).code).toBe('score = 9;');
  });

  it('imports a well-formed scenario that does not compile as develop only: NOT_DEPLOYED with diagnostics', async () => {
    const user = await testApp.newUser();
    const broken = simpleScenario('broken', { code: 'score = income +;' });
    const [created] = await importAs(testApp, user, broken);
    expect(created.outcome).toBe('NOT_DEPLOYED');
    expect(created.diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ nodeId: 'calc', code: expect.any(String), message: expect.any(String) }),
      ]),
    );
    const [again] = await importAs(testApp, user, broken, { overwrite_deploy: true });
    expect(again.outcome).toBe('NOT_DEPLOYED');
    expect(again.version).toBeUndefined();
    const versions = await request(testApp.app)
      .get(`/api/scenario/${created.scenarioId}/version`)
      .query({ context: user.context() })
      .set(bearer(user));
    expect(versions.body.map((v: { version: string }) => v.version)).toEqual(['develop']);
  });

  describe('overwrite_deploy validates as deployScenario does', () => {
    const versionsOf = async (user: Awaited<ReturnType<TestApp['newUser']>>, id: string) =>
      (
        (
          await request(testApp.app)
            .get(`/api/scenario/${id}/version`)
            .query({ context: user.context() })
            .set(bearer(user))
        ).body as Array<{ version: string }>
      ).map((v) => v.version);

    it('does not deploy a scenario whose test cases fail (NOT_DEPLOYED naming the test case), where deploy answers 422', async () => {
      const user = await testApp.newUser();
      const [created] = await importAs(testApp, user, simpleScenario('s'));
      const failing = simpleScenario('s', { code: 'score = 7;' });
      const [imported] = await importAs(testApp, user, failing, { overwrite_deploy: true });
      expect(imported).toMatchObject({ name: 's', scenarioId: created.scenarioId, outcome: 'NOT_DEPLOYED' });
      expect(imported.version).toBeUndefined();
      expect(imported.diagnostics).toEqual([
        expect.objectContaining({
          code: 'TEST_CASE_FAILED',
          path: 'testCases[0]',
          message: expect.stringMatching(/typical applicant/),
        }),
      ]);
      expect(await versionsOf(user, created.scenarioId)).toEqual(['develop']);
      expect(await testApp.services.deployedScenarios.find(user.id, 's')).toBeNull();
      // Without overwrite_develop the development version is untouched; made the development version, deploy refuses it too, and deploys it only with skip_validation.
      expect((await importAs(testApp, user, failing, { overwrite_develop: true }))[0].outcome).toBe('UPDATED');
      const deploy = (query: Record<string, string> = {}) =>
        request(testApp.app)
          .post(`/api/scenario/deploy/${created.scenarioId}`)
          .query({ context: user.context(), ...query })
          .set(bearer(user));
      const refused = await deploy();
      expect(refused.status).toBe(422);
      expect(refused.body.details).toEqual([
        expect.objectContaining({ code: 'TEST_CASE_FAILED', path: 'testCases[0]' }),
      ]);
      expect((await deploy({ skip_validation: 'true' })).status).toBe(204);
    });

    it('checks the imported test cases with overwrite_develop and the stored ones without', async () => {
      const user = await testApp.newUser();
      const [created] = await importAs(testApp, user, simpleScenario('s'));
      const changed = simpleScenario('s', { code: 'score = 7;', testExpression: 'score === 7' });
      expect((await importAs(testApp, user, changed, { overwrite_deploy: true }))[0].outcome).toBe('NOT_DEPLOYED');
      expect(
        (await importAs(testApp, user, changed, { overwrite_develop: true, overwrite_deploy: true }))[0],
      ).toMatchObject({ outcome: 'UPDATED_AND_DEPLOYED', version: '1' });
      expect(await versionsOf(user, created.scenarioId)).toEqual(['develop', '1']);
    });

    it('does not deploy a scenario whose data lookup names a collection that does not exist', async () => {
      const user = await testApp.newUser();
      const item = everyNodeScenario('every');
      item.testCases = [];
      await importAs(testApp, user, item);
      const [imported] = await importAs(testApp, user, item, { overwrite_deploy: true });
      expect(imported.outcome).toBe('NOT_DEPLOYED');
      expect(imported.diagnostics).toEqual(expect.arrayContaining([expect.objectContaining({ nodeId: 'lookup' })]));
    });
  });

  it('answers 400 INVALID_SCENARIO naming scenario, path and message when the 2nd scenario breaks the schema, and imports nothing', async () => {
    const user = await testApp.newUser();
    const bad = everyNodeScenario('bad');
    (
      bad.nodeProperties.card.content as { characteristics: { bins: Record<string, unknown>[] }[] }
    ).characteristics[0].bins[2].min = 'sixty';
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .send([simpleScenario('good'), bad]);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_SCENARIO');
    expect(response.body.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: 'scenarios[1].nodeProperties.card.content.characteristics[0].bins[2].min',
          scenario: 'bad',
          index: 1,
          message: expect.stringContaining('number'),
        }),
      ]),
    );
    expect((await exportOf(user)).body).toEqual([]);
  });

  it('answers 400 INVALID_SCENARIO for content text that is not JSON', async () => {
    const user = await testApp.newUser();
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .send({ ...simpleScenario('x'), content: '{"nodes": [' });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_SCENARIO');
    expect(response.body.details[0].path).toBe('scenarios[0].content');
  });

  it.each([65, 5000, 100_000])(
    "answers 400 INVALID_SCENARIO naming the path when JSON inside a node's content text nests %i levels deep, and imports nothing",
    async (levels) => {
      // An HTTP node's body takes any JSON; the body of the request itself is shallow, the text inside it is not.
      const user = await testApp.newUser();
      const scenario = {
        name: 'deep-body',
        content: {
          nodes: [
            { id: 'start', type: 'START' },
            { id: 'call', type: 'HTTP_CALL' },
            { id: 'end', type: 'END' },
          ],
          edges: [
            { from: 'start', to: 'call' },
            { from: 'call', to: 'end' },
          ],
        },
        nodeProperties: {
          start: {
            id: 'start',
            type: 'START',
            content: { inputs: [{ name: 'a', type: { type: 'INTEGER' }, required: true }] },
          },
          call: {
            id: 'call',
            type: 'HTTP_CALL',
            content: `{"method":"POST","url":"https://api.example.com/x","output":"r","body":${'['.repeat(levels)}1${']'.repeat(levels)}}`,
          },
          end: { id: 'end', type: 'END', content: { outputs: ['r'] } },
        },
      };
      const response = await request(testApp.app)
        .post('/api/scenario/import')
        .query({ context: user.context() })
        .set(bearer(user))
        .send([scenario]);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_SCENARIO');
      expect(response.body.details[0]).toMatchObject({
        path: `scenarios[0].nodeProperties.call.content.body${'[0]'.repeat(63)}`,
        message: expect.stringContaining('nested deeper than 64 levels'),
      });
      expect((await exportOf(user)).body).toEqual([]);
    },
  );

  it('stores a test-case expression as long as the spec allows, in four-byte characters', async () => {
    const user = await testApp.newUser();
    const scenario = simpleScenario('long-expression');
    // 20,000 characters as the spec counts them (code points): 80,000 bytes of UTF-8.
    const code = `${'😀'.repeat(19_996)}true`;
    (scenario.testCases as Array<{ expression: { code: string } }>)[0].expression.code = code;
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .send([scenario]);
    expect(response.status).toBe(200);
    const [exported] = (await exportOf(user, { name: 'long-expression' })).body;
    expect(exported.testCases[0].expression.code).toBe(code);
  });

  it('answers 400 when the same name appears twice in one import', async () => {
    const user = await testApp.newUser();
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .send([simpleScenario('twice'), simpleScenario('twice')]);
    expect(response.status).toBe(400);
    expect(response.body.details[0].path).toBe('scenarios[1].name');
  });

  it('answers 400 MALFORMED_BODY for YAML that does not parse, and 400 VALIDATION_FAILED for a body of the wrong shape', async () => {
    const user = await testApp.newUser();
    const yaml = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .set('Content-Type', 'application/yaml')
      .send('- name: a\n  content: [\n');
    expect(yaml.status).toBe(400);
    expect(yaml.body.code).toBe('MALFORMED_BODY');
    const shape = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .send({ name: 'x' });
    expect(shape.status).toBe(400);
    expect(shape.body.code).toBe('VALIDATION_FAILED');
  });

  it('answers 401 without a token and 403 when a non-admin imports for another owner', async () => {
    const user = await testApp.newUser();
    const other = await testApp.newUser();
    expect(
      (
        await request(testApp.app)
          .post('/api/scenario/import')
          .query({ context: user.context() })
          .send(simpleScenario('x'))
      ).status,
    ).toBe(401);
    const forbidden = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context(other.username) })
      .set(bearer(user))
      .send(simpleScenario('x'));
    expect(forbidden.status).toBe(403);
  });

  it('lets an admin import into another owner (context.owner)', async () => {
    const user = await testApp.newUser();
    const admin = await testApp.newUser({ admin: true });
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: admin.context(user.username) })
      .set(bearer(admin))
      .send(simpleScenario('for-user'));
    expect(response.status).toBe(200);
    expect((await exportOf(user)).body.map((v: { name: string }) => v.name)).toEqual(['for-user']);
  });

  it('lets concurrent imports of the same new name both succeed: one creates, the other sees it', async () => {
    const user = await testApp.newUser();
    const send = () =>
      request(testApp.app)
        .post('/api/scenario/import')
        .query({ context: user.context() })
        .set(bearer(user))
        .send(simpleScenario('race'));
    const responses = await Promise.all([send(), send(), send()]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(responses.map((r) => r.body.scenarios[0].outcome).sort()).toEqual(['CREATED', 'SKIPPED', 'SKIPPED']);
  });

  it('answers 413 for a body over the limit', async () => {
    const user = await testApp.newUser();
    const huge = simpleScenario('huge');
    huge.description = 'x'.repeat(testApp.config.limits.bodyBytes + 10);
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set(bearer(user))
      .send(huge);
    expect(response.status).toBe(413);
  });
});

describe('exportScenarios', () => {
  it('exports the opened version of every scenario of the owner, by name', async () => {
    const user = await testApp.newUser();
    await importAs(testApp, user, [simpleScenario('b'), simpleScenario('a')]);
    const response = await exportOf(user);
    expect(response.status).toBe(200);
    expect(response.body.map((v: { name: string }) => v.name)).toEqual(['a', 'b']);
    expect(response.body[0]).toMatchObject({ version: 'develop', status: 'DEVELOP', owner: user.username });
  });

  it('exports one scenario by name, and answers 404 SCENARIO_NOT_FOUND for an unknown name', async () => {
    const user = await testApp.newUser();
    await importAs(testApp, user, [simpleScenario('b'), simpleScenario('a')]);
    const one = await exportOf(user, { name: 'b' });
    expect(one.body.map((v: { name: string }) => v.name)).toEqual(['b']);
    const missing = await exportOf(user, { name: 'nope' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('SCENARIO_NOT_FOUND');
  });

  it('exports YAML when Accept prefers application/yaml, and type wins over Accept', async () => {
    const user = await testApp.newUser();
    await importAs(testApp, user, simpleScenario('y'));
    const yaml = await exportOf(user).set('Accept', 'application/yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(yaml.headers.vary).toMatch(/Accept/);
    expect(parseYaml(yaml.text)).toEqual((await exportOf(user)).body);
    const preferred = await exportOf(user).set('Accept', 'application/json;q=0.5, application/yaml');
    expect(preferred.headers['content-type']).toMatch(/^application\/yaml/);
    const json = await exportOf(user).set('Accept', 'application/json, application/yaml;q=0.9');
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    const forced = await exportOf(user, { type: 'json' }).set('Accept', 'application/yaml');
    expect(forced.headers['content-type']).toMatch(/^application\/json/);
  });

  it('exports YAML with type=yaml', async () => {
    const user = await testApp.newUser();
    await importAs(testApp, user, simpleScenario('y'));
    const response = await exportOf(user, { type: 'yaml' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/yaml/);
    expect(parseYaml(response.text)).toEqual((await exportOf(user)).body);
  });

  it('answers 401 without a token, 403 for another owner, and reads a missing context as {} (own scenarios)', async () => {
    const user = await testApp.newUser();
    const other = await testApp.newUser();
    await importAs(testApp, user, simpleScenario('mine'));
    expect((await request(testApp.app).get('/api/scenario/export').query({ context: user.context() })).status).toBe(
      401,
    );
    const withoutContext = await request(testApp.app).get('/api/scenario/export').set(bearer(user));
    expect(withoutContext.status).toBe(200);
    expect(withoutContext.body.map((v: { name: string }) => v.name)).toEqual(['mine']);
    expect((await exportOf(user, { context: user.context(other.username) })).status).toBe(403);
  });
});

describe('round trip: import(export(x)) reproduces x', () => {
  const formats: Array<['JSON' | 'YAML']> = [['JSON'], ['YAML']];

  it.each(formats)(
    'over a scenario using every node kind, in %s, into a fresh user and into the same user',
    async (format) => {
      const user = await testApp.newUser();
      const [created] = await importAs(testApp, user, everyNodeScenario('all-nodes'));
      expect(created.outcome).toBe('CREATED');
      const first = await exportOf(user, format === 'YAML' ? { type: 'yaml' } : {});
      expect(first.status).toBe(200);
      const send = (target: typeof user, query: Record<string, boolean> = {}) => {
        const post = request(testApp.app)
          .post('/api/scenario/import')
          .query({ context: target.context(), ...query })
          .set(bearer(target));
        return format === 'YAML'
          ? post.set('Content-Type', 'application/yaml').send(first.text)
          : post.send(first.body);
      };

      const fresh = await testApp.newUser();
      expect((await send(fresh)).body.scenarios[0].outcome).toBe('CREATED');
      const same = await send(user, { overwrite_develop: true });
      expect(same.body.scenarios[0].outcome).toBe('UPDATED');

      const original = portable((await exportOf(user)).body);
      expect(portable((await exportOf(fresh)).body)).toEqual(original);
      expect(portable(format === 'YAML' ? parseYaml(first.text) : first.body)).toEqual(original);
      const kinds = new Set(
        Object.values(original[0].nodeProperties as Record<string, { type: string }>).map((p) => p.type),
      );
      expect([...kinds].sort()).toEqual([
        'DATA_LOOKUP',
        'DECISION',
        'DECISION_TABLE',
        'END',
        'HTTP_CALL',
        'SCENARIO_CALL',
        'SCORECARD',
        'SCRIPT',
        'START',
      ]);
    },
  );
});
