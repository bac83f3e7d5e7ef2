import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, importAs, type ImportItem } from '../scenarios/support/fixtures.js';

/**
 * Two tenants attacking each other through the API, as docs/scenarios.md section 5 promises they cannot:
 * nothing one run leaves behind reaches another run (of the same or another user), the clock is out of
 * reach, and one tenant's endless or memory-hungry runs neither fail nor stall the other's.
 */
let t: TestApp;
let alice: TestUser;
let bob: TestUser;

const LIMIT_MS = 300;

beforeAll(async () => {
  applyTestEnvironment();
  t = await createTestApp({
    configOverrides: {
      limits: { ...loadConfig().limits, runTimeoutMs: LIMIT_MS, scriptMemoryMb: 64, testCasesBudgetMs: 700 },
    },
  });
  alice = await t.newUser({ prefix: 'alice' });
  bob = await t.newUser({ prefix: 'bob' });
});
afterAll(() => t.close());

const node = (id: string, type: string, content: unknown) => ({ id, type, content });

/** START (inputs) → one SCRIPT → END (outputs), with optional test cases. */
function scriptScenario(
  name: string,
  code: string,
  inputs: { name: string; type: string }[],
  outputs: string[],
  testCases: unknown[] = [],
): ImportItem {
  return {
    name,
    content: {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'calc', type: 'SCRIPT', name: 'Calc' },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { from: 'start', to: 'calc' },
        { from: 'calc', to: 'end' },
      ],
    },
    nodeProperties: {
      start: node('start', 'START', {
        inputs: inputs.map((i) => ({ name: i.name, type: { type: i.type }, required: true })),
      }),
      calc: node('calc', 'SCRIPT', { language: 'javascript', code, outputs }),
      end: node('end', 'END', { outputs }),
    },
    testCases,
  };
}

/** Imports and deploys; returns the scenario id. */
async function deployed(user: TestUser, item: ImportItem): Promise<string> {
  const [outcome] = await importAs(t, user, item);
  const response = await request(t.app)
    .post(`/api/scenario/deploy/${outcome.scenarioId}`)
    .query({ context: user.context() })
    .set(bearer(user));
  if (response.status !== 204) throw new Error(`deploy failed: ${response.status} ${JSON.stringify(response.body)}`);
  return outcome.scenarioId;
}

const score = (user: TestUser, name: string, inputs: unknown = {}) =>
  request(t.app)
    .post('/api/scenario/code/remote/score')
    .query({ name, key: user.scoreToken })
    .send(inputs as object);
const debug = (user: TestUser, id: string, inputs: unknown = {}) =>
  request(t.app)
    .post(`/api/scenario/debug/${id}`)
    .query({ context: user.context() })
    .set(bearer(user))
    .send(inputs as object);

describe('nothing a run leaves behind reaches another tenant', () => {
  it("never shows one user's regex match to another through RegExp statics, in debug or score", async () => {
    const matcher = await deployed(
      alice,
      scriptScenario(
        'matcher',
        'const m = /account (\\w+)-(\\d+)/.exec(text); out = m ? m[2] : null;',
        [{ name: 'text', type: 'STRING' }],
        ['out'],
      ),
    );
    const reader = await deployed(
      bob,
      scriptScenario(
        'reader',
        'out = [RegExp.input, RegExp.lastMatch, RegExp.$1, RegExp.$2, RegExp.leftContext, RegExp.rightContext];',
        [],
        ['out'],
      ),
    );
    const nothing = { out: [null, null, null, null, null, null] };
    expect((await score(alice, 'matcher', { text: 'alice account iban-4711 secret' })).body.result).toEqual({
      out: '4711',
    });
    expect((await score(bob, 'reader')).body.result).toEqual(nothing);
    expect((await debug(alice, matcher, { text: 'alice account iban-4712 secret' })).body.result).toEqual({
      out: '4712',
    });
    expect((await debug(bob, reader)).body.result).toEqual(nothing);
    expect((await score(bob, 'reader')).body.result).toEqual(nothing);
  });

  it('gives scripts no this to keep a counter on: every score and debug, of either user, starts from scratch', async () => {
    const code = 'this.c = (this.c || 0) + 1; out = this.c;';
    const aliceId = await deployed(alice, scriptScenario('counter', code, [], ['out']));
    // Bob's develop version has the very same content (the same compilation by content hash).
    const [bobs] = await importAs(t, bob, scriptScenario('counter', code, [], ['out']));
    const outcomes = [
      await score(alice, 'counter'),
      await score(alice, 'counter'),
      await debug(alice, aliceId),
      await debug(bob, bobs.scenarioId),
      await debug(bob, bobs.scenarioId),
    ];
    for (const response of outcomes) {
      expect(response.status).toBe(422);
      expect(response.body.details[0]).toMatchObject({ code: 'SCRIPT_ERROR', nodeId: 'calc' });
      expect(response.body.details[0].message).toMatch(/TypeError/);
    }
    await deployed(bob, scriptScenario('this-probe', 'out = typeof this;', [], ['out']));
    expect((await score(bob, 'this-probe')).body.result).toEqual({ out: 'undefined' });
  });

  it("lets no user's run change what another's runs see (globals, prototypes, built-ins)", async () => {
    const attacks = [
      'globalThis.stolen = []; out = 1;',
      'Object.prototype.isAdmin = true; out = 1;',
      'Array.prototype.push = function () { return 0; }; out = 1;',
      'JSON.stringify = () => "{}"; out = 1;',
      'String.prototype.toUpperCase = () => "pwned"; out = 1;',
      'Error.prepareStackTrace = (e, frames) => frames.map((f) => f.getThis()); out = 1;',
    ];
    for (const [k, code] of attacks.entries()) {
      await deployed(alice, scriptScenario(`attack-${k}`, code, [], ['out']));
      const response = await score(alice, `attack-${k}`);
      expect(response.status).toBe(422);
    }
    await deployed(
      bob,
      scriptScenario(
        'probe',
        'const a = []; a.push(1); out = [typeof globalThis.stolen, ({}).isAdmin, a.length, JSON.stringify({ x: 1 }), "ok".toUpperCase(), typeof Error.prepareStackTrace];',
        [],
        ['out'],
      ),
    );
    expect((await score(bob, 'probe')).body.result).toEqual({
      out: ['undefined', null, 1, '{"x":1}', 'OK', 'undefined'],
    });
  });

  it('keeps the clock out of reach: Intl formatting without a date is refused like Date.now()', async () => {
    const id = await deployed(
      alice,
      scriptScenario(
        'clock',
        "out = new Intl.DateTimeFormat('en', { hour: 'numeric', minute: 'numeric', second: 'numeric', fractionalSecondDigits: 3 }).format();",
        [],
        ['out'],
      ),
    );
    for (const response of [await score(alice, 'clock'), await debug(alice, id)]) {
      expect(response.status).toBe(422);
      expect(response.body.details[0].message).toMatch(/without a date is not available/);
    }
    await deployed(
      alice,
      scriptScenario(
        'parts',
        'out = new Intl.DateTimeFormat().formatToParts().map((p) => p.value).join("");',
        [],
        ['out'],
      ),
    );
    expect((await score(alice, 'parts')).status).toBe(422);
  });
});

describe("one tenant's failing runs", () => {
  it("never fail or stall another tenant's scores, and the API stays live, while they loop", async () => {
    await deployed(alice, scriptScenario('spin', 'while (true) {} out = 1;', [], ['out']));
    await deployed(bob, scriptScenario('double', 'out = n * 2;', [{ name: 'n', type: 'INTEGER' }], ['out']));
    const order: string[] = [];
    const loops = Array.from({ length: 4 }, () =>
      score(alice, 'spin').then((response) => {
        order.push('alice');
        return response;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const live = request(t.app)
      .get('/health/live')
      .then((response) => {
        order.push('live');
        return response;
      });
    const bobs = Array.from({ length: 8 }, (_, n) =>
      score(bob, 'double', { n }).then((response) => {
        order.push('bob');
        return response;
      }),
    );
    const [loopResponses, liveResponse, bobResponses] = await Promise.all([
      Promise.all(loops),
      live,
      Promise.all(bobs),
    ]);
    for (const response of loopResponses)
      expect(response.body.details[0]).toMatchObject({ code: 'TIME_LIMIT_EXCEEDED', nodeId: 'calc' });
    expect(liveResponse.status).toBe(200);
    bobResponses.forEach((response, n) => {
      expect(response.body.result).toEqual({ out: n * 2 });
    });
    // Alice holds one worker for 4 × 300 ms; Bob and the health check are served before her second loop ends.
    expect(order.slice(0, 10).filter((who) => who !== 'alice')).toHaveLength(9);
  });

  it("never dispose or delay another tenant's sandbox when they exhaust their memory", async () => {
    await deployed(
      alice,
      scriptScenario('hog', 'const keep = []; while (true) keep.push(new Array(1e5).fill(1)); out = 1;', [], ['out']),
    );
    await deployed(bob, scriptScenario('steady', 'out = n + 1;', [{ name: 'n', type: 'INTEGER' }], ['out']));
    const order: string[] = [];
    const hog = score(alice, 'hog').then((response) => {
      order.push('alice');
      return response;
    });
    const steady = Promise.all(Array.from({ length: 8 }, (_, n) => score(bob, 'steady', { n }))).then((responses) => {
      order.push('bob');
      return responses;
    });
    const [hogResponse, steadyResponses] = await Promise.all([hog, steady]);
    expect(hogResponse.status).toBe(422);
    expect(hogResponse.body.details[0].code).toMatch(/MEMORY_LIMIT_EXCEEDED|TIME_LIMIT_EXCEEDED/);
    steadyResponses.forEach((response, n) => {
      expect(response.body.result).toEqual({ out: n + 1 });
    });
    expect(order).toEqual(['bob', 'alice']);
    expect((await score(bob, 'steady', { n: 41 })).body.result).toEqual({ out: 42 });
    // Alice's next run gets a fresh sandbox.
    await deployed(alice, scriptScenario('after-hog', 'out = n - 1;', [{ name: 'n', type: 'INTEGER' }], ['out']));
    expect((await score(alice, 'after-hog', { n: 43 })).body.result).toEqual({ out: 42 });
  });
});

describe('validation runs every test case under one budget', () => {
  it('fails the test cases that find the shared budget used up instead of giving each its own limit', async () => {
    const loopingCases = Array.from({ length: 10 }, (_, k) => ({
      name: `loops ${k}`,
      variables: [{ name: 'n', value: k }],
      expression: { code: 'out === 1', language: 'javascript' },
    }));
    const [outcome] = await importAs(
      t,
      alice,
      scriptScenario(
        'slow-tests',
        'while (n >= 0) {} out = 1;',
        [{ name: 'n', type: 'INTEGER' }],
        ['out'],
        loopingCases,
      ),
    );
    const response = await request(t.app)
      .post(`/api/scenario/validate/${outcome.scenarioId}`)
      .query({ context: alice.context() })
      .set(bearer(alice));
    expect(response.status).toBe(422);
    const reasons: string[] = response.body.details.map((d: { reason: string }) => d.reason);
    expect(reasons).toHaveLength(10);
    expect(reasons.every((reason) => reason.startsWith('TIME_LIMIT_EXCEEDED'))).toBe(true);
    // 700 ms shared, 300 ms per run: two runs use their own limit, then the budget runs out.
    expect(reasons.filter((reason) => reason.includes(`limit of ${LIMIT_MS} ms`)).length).toBeLessThanOrEqual(2);
    expect(reasons.filter((reason) => reason.includes('of the 700 ms its validation')).length).toBeGreaterThanOrEqual(
      8,
    );
  });

  it('refuses more than 200 test cases with 400 TOO_MANY_TEST_CASES', async () => {
    const cases = (count: number) =>
      Array.from({ length: count }, (_, k) => ({
        name: `case ${k}`,
        variables: [{ name: 'n', value: k }],
        expression: { code: 'out >= 0', language: 'javascript' },
      }));
    const tooMany = await request(t.app)
      .post('/api/scenario/import')
      .query({ context: alice.context() })
      .set(bearer(alice))
      .send(scriptScenario('many', 'out = n;', [{ name: 'n', type: 'INTEGER' }], ['out'], cases(201)));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: 'TOO_MANY_TEST_CASES', details: [{ path: 'scenarios[0].testCases' }] });
    const [outcome] = await importAs(
      t,
      alice,
      scriptScenario('enough', 'out = n;', [{ name: 'n', type: 'INTEGER' }], ['out'], cases(200)),
    );
    const validated = await request(t.app)
      .post(`/api/scenario/validate/${outcome.scenarioId}`)
      .query({ context: alice.context() })
      .set(bearer(alice));
    expect(validated.status).toBe(204);
  });
});
