import request from 'supertest';
import { stringify as toYaml } from 'yaml';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore } from '../execution/support.js';
import { simpleScenario } from '../scenarios/support/fixtures.js';

/** `levels` arrays nested in one another around `inner`, as JSON text (built without recursion). */
function nestedJson(levels: number, inner = '1'): string {
  return `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
}

/** `{"a":{"a":…}}`, `levels` objects deep. */
function nestedObject(levels: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < levels; level += 1) value = { a: value };
  return value;
}

let testApp: TestApp;
let user: TestUser;
let limit: number;

beforeAll(async () => {
  isolateJobStore('body-depth');
  testApp = await createTestApp();
  user = await testApp.newUser();
  limit = testApp.config.limits.bodyDepth;
  await deployScenario(testApp.services.db, user.id, 'double', doublingScenario());
});
afterAll(async () => testApp.close());

async function storedRuns(): Promise<number> {
  const [rows] = (await testApp.services.db.raw('SELECT COUNT(*) AS n FROM run_results WHERE user_id = ?', [
    user.id,
  ])) as [Array<{ n: number }>, unknown];
  return Number(rows[0].n);
}

async function storedBatches(): Promise<number> {
  const [rows] = (await testApp.services.db.raw('SELECT COUNT(*) AS n FROM batches WHERE user_id = ?', [user.id])) as [
    Array<{ n: number }>,
    unknown,
  ];
  return Number(rows[0].n);
}

function expectTooDeep(response: request.Response): void {
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ status: 400, code: 'NESTING_TOO_DEEP' });
  expect(response.body.message).toContain(`${limit} levels`);
  expect(response.body.details).toEqual([expect.objectContaining({ path: expect.stringMatching(/^body/) })]);
}

describe('nesting-depth limit on JSON bodies', () => {
  it('has a documented default of 64 levels', () => {
    expect(limit).toBe(64);
  });

  it('answers 400 NESTING_TOO_DEEP for an async input nested 100,000 levels deep, and stores nothing', async () => {
    const response = await request(testApp.app)
      .post('/api/scenario/code/scoreasync/double')
      .set('Score-Token', user.scoreToken)
      .set('Content-Type', 'application/json')
      .send(`{"a":${nestedJson(100_000)}}`);
    expectTooDeep(response);
    expect(await storedRuns()).toBe(0);
  });

  it('answers 400 NESTING_TOO_DEEP for a batch element nested 100,000 levels deep, and stores nothing', async () => {
    const response = await request(testApp.app)
      .post(`/api/batch/score?key=${user.scoreToken}`)
      .set('Content-Type', 'application/json')
      .send(`{"scenarioName":"double","parameters":[{"a":1},{"a":${nestedJson(100_000)}}]}`);
    expectTooDeep(response);
    expect(response.body.details[0].path).toMatch(/^body\.parameters\[1\]\.a(\[0\])+$/);
    expect(await storedBatches()).toBe(0);
  });

  it('names the path where the limit was crossed', async () => {
    const body = { a: 1, deep: nestedObject(limit) };
    const response = await request(testApp.app)
      .post('/api/scenario/code/scoreasync/double')
      .set('Score-Token', user.scoreToken)
      .send(body);
    expectTooDeep(response);
    expect(response.body.details[0].path).toBe(`body.deep${'.a'.repeat(limit - 1)}`);
  });

  it('lets a body exactly at the limit through to the usual validation', async () => {
    // The root object is level 1: `deep` holds limit - 1 more levels.
    const response = await request(testApp.app)
      .post('/api/scenario/code/scoreasync/double')
      .set('Score-Token', user.scoreToken)
      .send({ a: 1, deep: nestedObject(limit - 1) });
    expect(response.body.code).not.toBe('NESTING_TOO_DEEP');
  });

  it('answers 400 NESTING_TOO_DEEP for a test-case value nested 20,000 levels deep on import, and stores nothing', async () => {
    const scenario = simpleScenario('deep-test-case');
    const body = JSON.stringify([scenario]).replace('"value":50000', `"value":${nestedJson(20_000)}`);
    const response = await request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set('Authorization', `Bearer ${user.accessToken}`)
      .set('Content-Type', 'application/json')
      .send(body);
    expectTooDeep(response);
    expect(response.body.details[0].path).toMatch(/^body\[0\]\.testCases\[0\]\.variables\[0\]\.value(\[0\])+$/);
    const [rows] = (await testApp.services.db.raw('SELECT COUNT(*) AS n FROM scenarios WHERE name = ?', [
      'deep-test-case',
    ])) as [Array<{ n: number }>, unknown];
    expect(Number(rows[0].n)).toBe(0);
  });
});

describe('nesting-depth limit on YAML bodies', () => {
  const importYaml = (yaml: string) =>
    request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set('Authorization', `Bearer ${user.accessToken}`)
      .set('Content-Type', 'application/yaml')
      .send(yaml);

  it('answers 400 NESTING_TOO_DEEP for flow collections nested 80,000 levels deep, before the YAML parser sees them', async () => {
    const response = await importYaml(`- name: deep\n  content: ${nestedJson(80_000)}\n`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('NESTING_TOO_DEEP');
    expect(response.body.details[0].path).toMatch(/^body at line 2, column \d+$/);
  });

  it('answers 400 NESTING_TOO_DEEP for block collections nested past the limit', async () => {
    const yaml = toYaml([{ name: 'deep', content: nestedObject(limit + 5) }]);
    const response = await importYaml(yaml);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('NESTING_TOO_DEEP');
  });

  it('answers 400 NESTING_TOO_DEEP for a structure made deep through an alias', async () => {
    // Neither line nests past the limit in the text; `b` does once `*a` is expanded.
    const response = await importYaml(`a: &a ${nestedJson(limit - 2)}\nb: [[[*a]]]\n`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('NESTING_TOO_DEEP');
    expect(response.body.details[0].path).toBe(`body.b${'[0]'.repeat(limit - 1)}`);
  });

  it('answers 400 NESTING_TOO_DEEP for an alias that holds itself (a cycle)', async () => {
    const response = await importYaml('- name: loop\n  content: &loop [*loop]\n  nodeProperties: {}\n');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('NESTING_TOO_DEEP');
  });

  it('answers 400 MALFORMED_BODY for aliases that would expand exponentially', async () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 10; level += 1)
      lines.push(
        `a${level}: &a${level} [${Array(10)
          .fill(`*a${level - 1}`)
          .join(', ')}]`,
      );
    const response = await importYaml(lines.join('\n'));
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MALFORMED_BODY');
  });
});

describe.each([
  ['the fast lane', true],
  ['Express', false],
])('nesting-depth limit on synchronous scoring through %s', (_lane, fastLane) => {
  let app: TestApp;
  let caller: TestUser;
  beforeAll(async () => {
    app = await createTestApp({ configOverrides: { scoreFastLane: fastLane } });
    caller = await app.newUser();
    await deployScenario(app.services.db, caller.id, 'double', doublingScenario());
  });
  afterAll(async () => app.close());

  it('answers 400 NESTING_TOO_DEEP, not 422, for an input nested 100,000 levels deep', async () => {
    const response = await request(app.app)
      .post(`/api/scenario/code/remote/score?name=double&key=${caller.scoreToken}`)
      .set('Content-Type', 'application/json')
      .send(`{"a":${nestedJson(100_000)}}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      status: 400,
      code: 'NESTING_TOO_DEEP',
      details: [{ path: expect.stringMatching(/^body\.a(\[0\])+$/) }],
    });
  });

  it('answers 400 NESTING_TOO_DEEP one level past the limit', async () => {
    const response = await request(app.app)
      .post(`/api/scenario/code/remote/score?name=double&key=${caller.scoreToken}`)
      .send({ a: 1, deep: nestedObject(app.config.limits.bodyDepth) });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('NESTING_TOO_DEEP');
  });
});
