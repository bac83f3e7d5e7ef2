import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { bearer, putDevelop, scenarioIdOf } from '../replay/support.js';
import { deployScenario, scriptScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** Champion/challenger splits (issue 32, docs/live-tests.md): live traffic shared between versions, by percentage. */

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;

beforeAll(async () => {
  isolateJobStore('splits');
  t = await createTestApp({ configOverrides: { metrics: { ...loadConfig().metrics, enabled: true } } });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  bob = await t.newUser();
  admin = await t.newUser({ admin: true });
});
afterAll(() => t.close());

const champion = () => scriptScenario('out = a < 0 ? "DECLINE" : "APPROVE";');
const challenger = () =>
  scriptScenario('if (a === 13) { throw new Error("unlucky thirteen"); } out = a % 2 === 0 ? "APPROVE" : "REVIEW";');

async function newScenario(name: string): Promise<string> {
  await deployScenario(t.services.db, alice.id, name, champion());
  const scenarioId = await scenarioIdOf(t, alice.id, name);
  await putDevelop(t, scenarioId, challenger());
  return scenarioId;
}

function score(name: string, inputs: Record<string, unknown>) {
  return request(t.app)
    .post(`/api/scenario/code/remote/score?name=${name}`)
    .set('Score-Token', alice.scoreToken)
    .send(inputs);
}

function createSplit(user: TestUser, scenarioId: string, body: unknown) {
  return request(t.app)
    .post(`/api/scenario/${scenarioId}/splits`)
    .set(bearer(user))
    .send(body as object);
}

function getSplit(user: TestUser, scenarioId: string, splitId: string) {
  return request(t.app)
    .get(`/api/scenario/${scenarioId}/splits/${encodeURIComponent(splitId)}`)
    .set(bearer(user));
}

function promote(user: TestUser, scenarioId: string, splitId: string, version: string) {
  return request(t.app)
    .post(`/api/scenario/${scenarioId}/splits/${encodeURIComponent(splitId)}/promote`)
    .set(bearer(user))
    .send({ version });
}

function end(user: TestUser, scenarioId: string, splitId: string) {
  return request(t.app)
    .post(`/api/scenario/${scenarioId}/splits/${encodeURIComponent(splitId)}/end`)
    .set(bearer(user));
}

/** The split once its report has folded `runs` runs (the writer flushed, the runs settled). */
async function splitWithRuns(scenarioId: string, splitId: string, runs: number): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      await t.services.shadows.splitWriter.flush();
      const { body } = await getSplit(alice, scenarioId, splitId);
      return body.report && body.report.runs >= runs ? body : undefined;
    },
    20_000,
    100,
  );
}

describe('a sticky split', () => {
  it('gives each customer the same arm on every call, answers with the arm\u2019s version, and reports per arm', async () => {
    const scenarioId = await newScenario('sticky');
    const created = await createSplit(alice, scenarioId, {
      challengers: [{ version: 'develop', percent: 30 }],
      stickyBy: 'a',
      decisionOutput: 'out',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      championVersion: '1',
      arms: [
        { version: '1', champion: true, percent: 70 },
        { version: 'develop', champion: false, percent: 30 },
      ],
      stickyBy: 'a',
      decisionOutput: 'out',
      state: 'RUNNING',
      createdBy: alice.username,
      report: { runs: 0 },
    });
    const splitId = created.body.splitId as string;

    // 100 customers, 3 calls each: every customer's 3 answers name one version, and its result is that version's.
    const armOf = new Map<number, string>();
    const byArm: Record<string, { runs: number; failed: number; decisions: Record<string, number> }> = {
      '1': { runs: 0, failed: 0, decisions: {} },
      develop: { runs: 0, failed: 0, decisions: {} },
    };
    for (let round = 0; round < 3; round += 1) {
      for (let a = 0; a < 100; a += 1) {
        const answer = await score('sticky', { a });
        const version = answer.status === 200 ? answer.body.version : 'develop';
        if (round === 0) armOf.set(a, version);
        expect(version).toBe(armOf.get(a));
        byArm[version].runs += 1;
        if (answer.status !== 200) {
          expect([a, answer.body.code]).toEqual([13, 'RUN_FAILED']);
          byArm[version].failed += 1;
          continue;
        }
        const expected = version === '1' ? 'APPROVE' : a % 2 === 0 ? 'APPROVE' : 'REVIEW';
        expect(answer.body.result).toEqual({ out: expected });
        byArm[version].decisions[expected] = (byArm[version].decisions[expected] ?? 0) + 1;
      }
    }
    const challengers = [...armOf.values()].filter((version) => version === 'develop').length;
    expect(challengers).toBeGreaterThan(10);
    expect(challengers).toBeLessThan(50);

    const split = await splitWithRuns(scenarioId, splitId, 300);
    expect(split.report.runs).toBe(300);
    for (const arm of split.report.arms) {
      const expected = byArm[arm.version];
      expect([arm.runs, arm.failed]).toEqual([expected.runs, expected.failed]);
      const decided = expected.runs - expected.failed;
      expect(
        Object.fromEntries(arm.decisions.map((d: { value: string; count: number }) => [d.value, d.count])),
      ).toEqual(expected.decisions);
      for (const decision of arm.decisions) {
        expect(decision.rate).toBeCloseTo(decision.count / decided, 10);
        expect(decision.low).toBeLessThanOrEqual(decision.rate);
        expect(decision.high).toBeGreaterThanOrEqual(decision.rate);
      }
      expect(arm.latencyMs.p50).toBeGreaterThan(0);
      expect(arm.latencyMs.p95).toBeGreaterThanOrEqual(arm.latencyMs.p50);
    }
    const [{ n }] = await t.services.db('split_runs').where({ split_id: splitId, arm: 'develop' }).count({ n: '*' });
    expect(Number(n)).toBe(byArm.develop.runs);
    const text = await t.services.metricsExposition?.render();
    expect(text).toContain(`scoring_split_runs_total{arm="challenger",outcome="failed"} ${byArm.develop.failed}`);
    expect(text).toContain(`scoring_split_runs_total{arm="champion",outcome="succeeded"} ${byArm['1'].runs}`);

    // Async and batch runs are split by the same rule: the stored result names the arm's version.
    const customers = [...armOf.keys()].filter((a) => a !== 13).slice(0, 10);
    const batch = await request(t.app)
      .post('/api/batch/score')
      .set('Score-Token', alice.scoreToken)
      .send({ scenarioName: 'sticky', parameters: customers.map((a) => ({ a })) });
    expect(batch.status).toBe(202);
    const stored = await waitFor(
      async () => {
        const rows = await t.services
          .db('run_results')
          .where({ batch_id: batch.body.batchTaskId })
          .whereNotNull('version')
          .select('version', 'element_index');
        return rows.length === customers.length ? rows : undefined;
      },
      20_000,
      100,
    );
    for (const row of stored as { version: string; element_index: number }[])
      expect(row.version).toBe(armOf.get(customers[row.element_index]));
  }, 60_000);
});

describe('promote and end', () => {
  it('promote deploys the challenger as the next version (who and when kept), ends the split, and every run gets it', async () => {
    const scenarioId = await newScenario('promoted');
    const { body: split } = await createSplit(alice, scenarioId, {
      challengers: [{ version: 'develop', percent: 50 }],
      decisionOutput: 'out',
    });
    // The development version changes after the split started: promote deploys the challenger as the split ran it.
    await putDevelop(t, scenarioId, scriptScenario('out = "CHANGED";'));
    for (let a = 0; a < 20; a += 1) expect((await score('promoted', { a: 2 * a })).status).toBe(200);
    const promoted = await promote(alice, scenarioId, split.splitId, 'develop');
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({
      state: 'ENDED',
      promotedVersion: '2',
      endedBy: alice.username,
      endedReason: 'challenger develop was promoted',
    });
    expect(Date.parse(promoted.body.endedAt)).toBeGreaterThan(Date.now() - 60_000);
    const version = await t.services
      .db('scenario_versions')
      .where({ scenario_id: Number(scenarioId), version_number: 2 })
      .first('source_version', 'description', 'created_at');
    expect(version.source_version).toBe('split develop');
    expect(version.description).toContain(`promoted by ${alice.username}`);
    for (let a = 1; a <= 5; a += 1) {
      const answer = await score('promoted', { a });
      expect([answer.status, answer.body.version, answer.body.result]).toEqual([
        200,
        '2',
        { out: a % 2 === 0 ? 'APPROVE' : 'REVIEW' },
      ]);
    }
    const again = await promote(alice, scenarioId, split.splitId, 'develop');
    expect([again.status, again.body.code]).toEqual([409, 'SPLIT_ENDED']);
    // Frozen: the 20 runs before the promotion, none after.
    const frozen = await splitWithRuns(scenarioId, split.splitId, 20);
    expect(frozen.report.runs).toBe(20);
  });

  it('end sends every run to the champion again; one running split a scenario; a deploy ends the split', async () => {
    const scenarioId = await newScenario('ended');
    const { body: split } = await createSplit(alice, scenarioId, {
      challengers: [{ version: 'develop', percent: 99 }],
      decisionOutput: 'out',
    });
    const second = await createSplit(alice, scenarioId, {
      challengers: [{ version: 'develop', percent: 10 }],
      decisionOutput: 'out',
    });
    expect([second.status, second.body.code]).toEqual([409, 'SPLIT_EXISTS']);
    const ended = await end(alice, scenarioId, split.splitId);
    expect(ended.body).toMatchObject({ state: 'ENDED', endedBy: alice.username, promotedVersion: null });
    for (let a = 0; a < 10; a += 1) expect((await score('ended', { a })).body.version).toBe('1');
    expect((await end(alice, scenarioId, split.splitId)).body.state).toBe('ENDED');

    const { body: next } = await createSplit(alice, scenarioId, {
      challengers: [{ version: 'develop', percent: 99 }],
      decisionOutput: 'out',
    });
    expect(next.state).toBe('RUNNING');
    const deployed = await request(t.app)
      .post(`/api/scenario/deploy/${scenarioId}?skip_validation=true`)
      .set(bearer(alice))
      .send({});
    expect(deployed.status).toBe(204);
    expect((await getSplit(alice, scenarioId, next.splitId)).body).toMatchObject({
      state: 'ENDED',
      endedReason: 'version 2 was deployed as champion',
    });
    for (let a = 0; a < 10; a += 1) expect((await score('ended', { a: 2 * a })).body.version).toBe('2');

    // listSplits: both, newest first, without reports.
    const listed = await request(t.app).get(`/api/scenario/${scenarioId}/splits`).set(bearer(alice));
    expect(listed.status).toBe(200);
    expect(listed.body.splits.map((s: { splitId: string; state: string }) => [s.splitId, s.state])).toEqual([
      [next.splitId, 'ENDED'],
      [split.splitId, 'ENDED'],
    ]);
    expect(listed.body.splits[1]).toMatchObject({ endedBy: alice.username, championVersion: '1' });
    expect(listed.body.splits[0]).not.toHaveProperty('report');
  });

  it('refuses shares of 100 % or more, an unknown version, the champion as a challenger', async () => {
    const scenarioId = await newScenario('refused');
    const full = await createSplit(alice, scenarioId, {
      challengers: [
        { version: 'develop', percent: 60 },
        { version: '1', percent: 40 },
      ],
      decisionOutput: 'out',
    });
    expect([full.status, full.body.code]).toEqual([400, 'VALIDATION_FAILED']);
    const unknown = await createSplit(alice, scenarioId, {
      challengers: [{ version: '7', percent: 10 }],
      decisionOutput: 'out',
    });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'VERSION_NOT_FOUND']);
    const itself = await createSplit(alice, scenarioId, {
      challengers: [{ version: '1', percent: 10 }],
      decisionOutput: 'out',
    });
    expect([itself.status, itself.body.code]).toEqual([400, 'VALIDATION_FAILED']);
    const { body: split } = await createSplit(alice, scenarioId, {
      challengers: [{ version: 'develop', percent: 10 }],
      decisionOutput: 'out',
    });
    const notChallenger = await promote(alice, scenarioId, split.splitId, '1');
    expect([notChallenger.status, notChallenger.body.code]).toEqual([404, 'VERSION_NOT_FOUND']);
  });
});

describe('a split beside a shadow', () => {
  it('runs the shadow beside the champion arm’s runs only', async () => {
    const scenarioId = await newScenario('split-shadowed');
    const shadow = await request(t.app)
      .post(`/api/scenario/${scenarioId}/shadows`)
      .set(bearer(alice))
      .send({ version: '1', outputs: ['out'] });
    expect(shadow.status).toBe(201);
    const { body: split } = await createSplit(alice, scenarioId, {
      challengers: [{ version: 'develop', percent: 50 }],
      stickyBy: 'a',
      decisionOutput: 'out',
    });
    let championRuns = 0;
    for (let a = 100; a < 140; a += 1)
      if ((await score('split-shadowed', { a })).body.version === '1') championRuns += 1;
    expect(championRuns).toBeGreaterThan(0);
    expect(championRuns).toBeLessThan(40);
    await splitWithRuns(scenarioId, split.splitId, 40);
    const stored = await waitFor(
      async () => {
        await t.services.shadows.writer.flush();
        const [{ n }] = await t.services.db('shadow_runs').where({ shadow_id: shadow.body.shadowId }).count({ n: '*' });
        return Number(n) >= championRuns ? Number(n) : undefined;
      },
      10_000,
      100,
    );
    expect(stored).toBe(championRuns);
  });
});

describe('who may', () => {
  it('owners and admins: another user\u2019s scenario is 403, another scenario\u2019s split 404, no bearer 401', async () => {
    const scenarioId = await newScenario('guarded');
    const other = await newScenario('guarded-other');
    expect(
      (
        await createSplit(bob, scenarioId, {
          challengers: [{ version: 'develop', percent: 10 }],
          decisionOutput: 'out',
        })
      ).status,
    ).toBe(403);
    const { body: split } = await createSplit(alice, scenarioId, {
      challengers: [{ version: 'develop', percent: 10 }],
      decisionOutput: 'out',
    });
    expect((await getSplit(bob, scenarioId, split.splitId)).status).toBe(403);
    expect((await promote(bob, scenarioId, split.splitId, 'develop')).status).toBe(403);
    expect((await end(bob, scenarioId, split.splitId)).status).toBe(403);
    const elsewhere = await getSplit(alice, other, split.splitId);
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, 'SPLIT_NOT_FOUND']);
    expect((await request(t.app).get(`/api/scenario/${scenarioId}/splits/${split.splitId}`)).status).toBe(401);
    const list = (user: TestUser | undefined, id: string) =>
      user
        ? request(t.app).get(`/api/scenario/${id}/splits`).set(bearer(user))
        : request(t.app).get(`/api/scenario/${id}/splits`);
    expect((await list(bob, scenarioId)).status).toBe(403);
    expect((await list(undefined, scenarioId)).status).toBe(401);
    const unknown = await list(alice, '999999999');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'SCENARIO_NOT_FOUND']);
    expect((await list(admin, scenarioId)).body.splits.map((s: { splitId: string }) => s.splitId)).toEqual([
      split.splitId,
    ]);
    expect((await list(alice, other)).body.splits).toEqual([]);
    expect((await getSplit(admin, scenarioId, split.splitId)).status).toBe(200);
    expect((await end(admin, scenarioId, split.splitId)).body).toMatchObject({
      state: 'ENDED',
      endedBy: admin.username,
    });
  });
});
