import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';
import { ReplayJob } from '../../src/replay/replay-job.js';
import { MySqlReplayStore } from '../../src/replay/replay-store.js';
import { contentHash } from '../../src/scenarios/version-content.js';
import { createLogger } from '../../src/logger.js';
import { chain, input, script, type TestNode } from '../engine/support/scenario-builder.js';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { timeOrderedId } from '../../src/ids/time-ordered-id.js';
import { deployScenario, doublingScenario, scriptScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import {
  bearer,
  getReplay,
  matrixOf,
  putDevelop,
  randomInts,
  recordBatch,
  replayed,
  scenarioIdOf,
  startReplay,
} from './support.js';
import { allStoredRecords, storedRecordCount } from '../records/stored-records.js';
import { UserStore } from '../../src/auth/user-store.js';

/** Replays (issue 13 §4): a candidate version run against recorded inputs, and the report of what would change. */

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;

beforeAll(async () => {
  isolateJobStore('replay');
  t = await createTestApp({
    configOverrides: {
      outboundAllowList: ['127.0.0.1'],
      replay: { maxRecords: 5000, concurrency: 64, maxActivePerOwner: 100, perWorker: 4 },
    },
  });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  bob = await t.newUser();
  admin = await t.newUser({ admin: true });
});
afterAll(() => t.close());

async function newScenario(name: string, doc = doublingScenario()): Promise<string> {
  await deployScenario(t.services.db, alice.id, name, doc);
  return scenarioIdOf(t, alice.id, name);
}

async function recordCount(scenarioId: string): Promise<number> {
  return storedRecordCount(t.services.db, scenarioId);
}

// ── the credit scorecard ──
// age, income and housing give points over a base of 500; the cut-offs turn the score into a decision.
const bin = (min: number | undefined, max: number | undefined, points: number) => ({
  ...(min === undefined ? {} : { min, minInclusive: true }),
  ...(max === undefined ? {} : { max, maxInclusive: false }),
  points,
});
function creditScenario(approveAt: number) {
  return chain(
    [input('age', 'INTEGER'), input('income', 'INTEGER'), input('housing', 'STRING')],
    [
      {
        id: 'card',
        type: 'SCORECARD',
        settings: {
          baseScore: 500,
          characteristics: [
            {
              name: 'Age',
              variable: 'age',
              reasonCode: 'AGE',
              elsePoints: -10,
              bins: [bin(undefined, 25, 0), bin(25, 40, 20), bin(40, undefined, 35)],
            },
            {
              name: 'Income',
              variable: 'income',
              reasonCode: 'INCOME',
              elsePoints: 0,
              bins: [bin(undefined, 2000, 0), bin(2000, 5000, 40), bin(5000, undefined, 80)],
            },
            {
              name: 'Housing',
              variable: 'housing',
              reasonCode: 'HOUSING',
              elsePoints: 0,
              bins: [
                { values: ['OWN'], points: 30 },
                { values: ['RENT'], points: 10 },
              ],
            },
          ],
        },
      },
      script('cutoff', `decision = score >= ${approveAt} ? "APPROVE" : score >= 560 ? "REVIEW" : "DECLINE";`, [
        'decision',
      ]),
    ],
    { outputs: ['decision', 'score'] },
  );
}

/** The same scorecard in plain JavaScript, written apart from the engine. */
function scoreByHand({ age, income, housing }: { age: number; income: number; housing: string }): number {
  const agePoints = age < 25 ? 0 : age < 40 ? 20 : 35;
  const incomePoints = income < 2000 ? 0 : income < 5000 ? 40 : 80;
  const housingPoints = housing === 'OWN' ? 30 : housing === 'RENT' ? 10 : 0;
  return 500 + agePoints + incomePoints + housingPoints;
}
const decideByHand = (score: number, approveAt: number) =>
  score >= approveAt ? 'APPROVE' : score >= 560 ? 'REVIEW' : 'DECLINE';

describe('a version that raises a scorecard cut-off from 600 to 620, replayed against 1,000 recorded runs', () => {
  let creditId: string;
  const random = randomInts(20261124);
  const applicants = Array.from({ length: 1000 }, () => ({
    age: 18 + random(60),
    income: 500 + random(8000),
    housing: ['OWN', 'RENT', 'FAMILY'][random(3)],
  }));

  beforeAll(async () => {
    creditId = await newScenario('credit', creditScenario(600));
    await recordBatch(t, alice, 'credit', applicants);
    await putDevelop(t, creditId, creditScenario(620));
  });

  it('reports the transition matrix computed independently, and no change in the score', async () => {
    const expected: Record<string, number> = {};
    for (const applicant of applicants) {
      const score = scoreByHand(applicant);
      const key = `${decideByHand(score, 600)}→${decideByHand(score, 620)}`;
      expected[key] = (expected[key] ?? 0) + 1;
    }
    const changedByHand = Object.entries(expected)
      .filter(([key]) => key.split('→')[0] !== key.split('→')[1])
      .reduce((sum, [, n]) => sum + n, 0);
    expect(changedByHand).toBeGreaterThan(20);
    const recordsBefore = await recordCount(creditId);

    const replay = await replayed(t, alice, creditId, { candidateVersion: 'develop', outputs: ['decision', 'score'] });

    expect(replay).toMatchObject({
      state: 'FINISHED',
      candidateVersion: 'develop',
      total: 1000,
      done: 1000,
      failed: 0,
      limit: 5000,
      sampleSize: 20,
      error: null,
    });
    const { report } = replay;
    expect(report).toMatchObject({ replayed: 1000, compared: 1000, changed: changedByHand });
    const [decision, score] = report.outputs;
    expect(decision).toMatchObject({
      name: 'decision',
      compared: 1000,
      changed: changedByHand,
      otherTransitions: { pairs: 0, records: 0 },
      differences: null,
    });
    expect(matrixOf(decision.transitions)).toEqual(expected);
    // Most frequent first.
    const counts = decision.transitions.map((pair: { count: number }) => pair.count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(score).toMatchObject({
      name: 'score',
      compared: 1000,
      changed: 0,
      differences: { count: 1000, mean: 0, p5: 0, p50: 0, p95: 0, min: 0, max: 0 },
    });
    expect(score.differences.meanOld).toBeCloseTo(applicants.reduce((sum, a) => sum + scoreByHand(a), 0) / 1000, 6);
    // Changed records side by side, only APPROVE → REVIEW can happen here.
    expect(report.sample).toHaveLength(20);
    for (const run of report.sample) {
      expect(run.old.result.decision).toBe('APPROVE');
      expect(run.new.result.decision).toBe('REVIEW');
      expect(run.new.result.score).toBe(scoreByHand(run.inputs));
    }
    expect(report.failures).toEqual({ onlyOld: 0, onlyNew: 0, both: 0, newErrorCodes: {}, runs: [], truncated: false });
    expect(report.notes).toEqual(
      expect.arrayContaining([
        expect.stringContaining('read the collections as they are today'),
        'Old values are what the recorded runs decided, by version: 1 (1000).',
      ]),
    );
    // A replay's runs are not decision records.
    await t.services.records.recorder.flush();
    expect(await recordCount(creditId)).toBe(recordsBefore);
  });

  it('shows the changed records newest first', async () => {
    const replay = await replayed(t, alice, creditId, {
      candidateVersion: 'develop',
      outputs: ['decision'],
      sampleSize: 200,
    });
    const records = await allStoredRecords(t.services.db, creditId);
    const changed = records
      .filter((row) => {
        const score = scoreByHand(row.inputs as never);
        return decideByHand(score, 600) !== decideByHand(score, 620);
      })
      .map((row: { id: string }) => row.id);
    expect(replay.report.sample.map((run: { recordId: string }) => run.recordId)).toEqual(changed.slice(0, 200));
  });

  it('takes at most `limit` records, the newest, and only those the browse filters select', async () => {
    const limited = await replayed(t, alice, creditId, {
      candidateVersion: 'develop',
      outputs: ['decision'],
      limit: 100,
    });
    expect(limited).toMatchObject({ state: 'FINISHED', total: 100, done: 100, limit: 100, report: { replayed: 100 } });

    const approved = applicants.filter((a) => decideByHand(scoreByHand(a), 600) === 'APPROVE').length;
    const filtered = await replayed(t, alice, creditId, {
      candidateVersion: 'develop',
      outputs: ['decision'],
      filter: { output: { decision: 'APPROVE' }, version: '1' },
    });
    expect(filtered).toMatchObject({
      state: 'FINISHED',
      total: approved,
      filter: { output: { decision: 'APPROVE' }, version: '1' },
      report: { replayed: approved },
    });
    expect(filtered.report.outputs[0].transitions.every((pair: { from: string }) => pair.from === 'APPROVE')).toBe(
      true,
    );

    const none = await replayed(t, alice, creditId, {
      candidateVersion: '1',
      outputs: ['decision'],
      filter: { to: '2001-01-01T00:00:00Z' },
    });
    expect(none).toMatchObject({
      state: 'FINISHED',
      total: 0,
      done: 0,
      report: { replayed: 0, compared: 0, changed: 0 },
    });
  });

  it('compares outputs named like Object.prototype properties as absent outputs, and its report stays readable', async () => {
    const replay = await replayed(t, alice, creditId, {
      candidateVersion: '1',
      outputs: ['constructor', 'toString', '__proto__', 'decision'],
      limit: 20,
    });
    expect(replay.state).toBe('FINISHED');
    for (const output of replay.report.outputs.slice(0, 3)) {
      expect(output).toMatchObject({ compared: 20, changed: 0, transitions: [{ from: null, to: null, count: 20 }] });
    }
  });

  it('of a deployed version against itself changes nothing', async () => {
    const replay = await replayed(t, alice, creditId, {
      candidateVersion: '1',
      outputs: ['decision', 'score'],
      limit: 300,
    });
    expect(replay.report).toMatchObject({ replayed: 300, compared: 300, changed: 0, sample: [] });
    expect(
      replay.report.outputs[0].transitions.every((pair: { from: string; to: string }) => pair.from === pair.to),
    ).toBe(true);
  });

  describe('deploy with the replay as its reference', () => {
    it('stores the reference with the new version, shown in the version history', async () => {
      const replay = await replayed(t, alice, creditId, {
        candidateVersion: 'develop',
        outputs: ['decision'],
        limit: 50,
      });
      const deployed = await request(t.app)
        .post(`/api/scenario/deploy/${creditId}`)
        .query({ replay: replay.replayId })
        .set(bearer(alice));
      expect(deployed.status).toBe(204);
      const history = await request(t.app).get(`/api/scenario/${creditId}/version`).set(bearer(alice));
      expect(history.status).toBe(200);
      const byLabel = Object.fromEntries(
        history.body.map((version: { version: string }) => [version.version, version]),
      );
      expect(byLabel['2']).toMatchObject({ status: 'DEPLOYED', replayId: replay.replayId });
      expect(byLabel['1']).not.toHaveProperty('replayId');
      expect(byLabel.develop).not.toHaveProperty('replayId');
    });

    it('refuses a replay of other content than the one deployed (409 REPLAY_CONTENT_MISMATCH)', async () => {
      await putDevelop(t, creditId, creditScenario(640));
      const replay = await replayed(t, alice, creditId, { candidateVersion: '1', outputs: ['decision'], limit: 10 });
      const deployed = await request(t.app)
        .post(`/api/scenario/deploy/${creditId}`)
        .query({ replay: replay.replayId })
        .set(bearer(alice));
      expect(deployed.status).toBe(409);
      expect(deployed.body).toMatchObject({ code: 'REPLAY_CONTENT_MISMATCH', details: [{ path: 'query.replay' }] });
    });

    it('refuses a replay that has not finished (409 REPLAY_NOT_FINISHED)', async () => {
      const develop = (await t.services
        .db('scenario_versions')
        .where({ scenario_id: Number(creditId), status: 'DEVELOP' })
        .first()) as { id: number; content: string; node_properties: string };
      const replayId = '00000000-0000-4000-8000-000000000001';
      await new MySqlReplayStore(t.services.db, new UserStore(t.services.db)).insert({
        id: replayId,
        scenarioId: Number(creditId),
        ownerId: alice.id,
        requesterId: alice.id,
        candidate: {
          label: 'develop',
          versionId: develop.id,
          contentHash: contentHash(develop.content, develop.node_properties),
        },
        document: { content: develop.content, nodeProperties: JSON.parse(develop.node_properties) },
        filter: {},
        outputs: ['decision'],
        limit: 10,
        sampleSize: 0,
        total: 10,
      });
      const deployed = await request(t.app)
        .post(`/api/scenario/deploy/${creditId}`)
        .query({ replay: replayId })
        .set(bearer(alice));
      expect(deployed.status).toBe(409);
      expect(deployed.body).toMatchObject({ code: 'REPLAY_NOT_FINISHED', message: expect.stringContaining('QUEUED') });
    });

    it("refuses an unknown replay, or another scenario's (404 REPLAY_NOT_FOUND), and deploys nothing", async () => {
      const otherId = await newScenario('other-for-deploy');
      await putDevelop(t, otherId, doublingScenario());
      const othersReplay = await replayed(t, alice, creditId, {
        candidateVersion: '1',
        outputs: ['decision'],
        limit: 1,
      });
      for (const replay of ['no-such-replay', othersReplay.replayId]) {
        const deployed = await request(t.app)
          .post(`/api/scenario/deploy/${otherId}`)
          .query({ replay })
          .set(bearer(alice));
        expect(deployed.status).toBe(404);
        expect(deployed.body).toMatchObject({ code: 'REPLAY_NOT_FOUND', details: [{ path: 'query.replay' }] });
      }
      const history = await request(t.app).get(`/api/scenario/${otherId}/version`).set(bearer(alice));
      expect(history.body.map((version: { version: string }) => version.version)).toEqual(['develop', '1']);
    });
  });

  it('starts again from the first record when its worker stops mid-replay', async () => {
    const develop = (await t.services
      .db('scenario_versions')
      .where({ scenario_id: Number(creditId), status: 'DEVELOP' })
      .first()) as { id: number; content: string; node_properties: string };
    const store = new MySqlReplayStore(t.services.db, new UserStore(t.services.db));
    const replayId = '00000000-0000-4000-8000-000000000002';
    await store.insert({
      id: replayId,
      scenarioId: Number(creditId),
      ownerId: alice.id,
      requesterId: alice.id,
      candidate: {
        label: 'develop',
        versionId: develop.id,
        contentHash: contentHash(develop.content, develop.node_properties),
      },
      document: { content: develop.content, nodeProperties: JSON.parse(develop.node_properties) },
      filter: {},
      outputs: ['decision'],
      limit: 1000,
      sampleSize: 5,
      total: 1000,
    });
    const job = new ReplayJob(
      store,
      new MySqlDecisionRecordStore(t.services.db),
      t.services.engine,
      { concurrency: 32, pageSize: 100 },
      createLogger('silent'),
    );
    let pages = 0;
    const keepAlive = async () => undefined;
    // The worker is told to stop after the third page: the job hands the replay back, QUEUED, nothing kept.
    expect(await job.run({ replayId }, keepAlive, () => ++pages >= 3)).toBe(false);
    expect(await store.find(replayId)).toMatchObject({ state: 'QUEUED', done: 0, failed: 0, report: null });
    expect(await job.run({ replayId }, keepAlive, () => false)).toBe(true);
    expect(await store.find(replayId)).toMatchObject({
      state: 'FINISHED',
      total: 1000,
      done: 1000,
      report: { replayed: 1000 },
    });
  });

  describe('whose job is lost', () => {
    /** A replay of the development version stored as startReplay stores it, with no job saved for it. */
    async function storedReplay(): Promise<{ replayId: string; store: MySqlReplayStore }> {
      const develop = (await t.services
        .db('scenario_versions')
        .where({ scenario_id: Number(creditId), status: 'DEVELOP' })
        .first()) as { id: number; content: string; node_properties: string };
      const store = new MySqlReplayStore(t.services.db, new UserStore(t.services.db));
      const replayId = timeOrderedId();
      await store.insert({
        id: replayId,
        scenarioId: Number(creditId),
        ownerId: alice.id,
        requesterId: alice.id,
        candidate: {
          label: 'develop',
          versionId: develop.id,
          contentHash: contentHash(develop.content, develop.node_properties),
        },
        document: { content: develop.content, nodeProperties: JSON.parse(develop.node_properties) },
        filter: {},
        outputs: ['decision'],
        limit: 100,
        sampleSize: 5,
        total: 100,
      });
      return { replayId, store };
    }
    const finished = (replayId: string) =>
      waitFor(async () => {
        const { body } = await getReplay(t, alice, creditId, replayId);
        return body.state === 'FINISHED' ? body : undefined;
      }, 30_000);
    const tenMinutesAgo = () => new Date(Date.now() - 600_000);

    it('is queued again by the stalled-work sweeper once it has waited QUEUED too long, and finishes', async () => {
      // The job store lost it (Redis restarted without its data), or the API died before saving it.
      const { replayId } = await storedReplay();
      await t.services.db('replays').where({ id: replayId }).update({ queued_at: tenMinutesAgo() });
      await t.services.execution.sweeper.sweepOnce();
      expect(await finished(replayId)).toMatchObject({ done: 100, report: { replayed: 100 } });
    });

    it('is queued again when it stayed RUNNING with no heartbeat (its worker and its job are gone), and finishes', async () => {
      const { replayId } = await storedReplay();
      await t.services
        .db('replays')
        .where({ id: replayId })
        .update({ state: 'RUNNING', started_at: tenMinutesAgo(), heartbeat_at: tenMinutesAgo(), done: 40 });
      await t.services.execution.sweeper.sweepOnce();
      expect(await finished(replayId)).toMatchObject({ done: 100, report: { replayed: 100 } });
    });

    it("is taken by one job at a time: a second job waits while the first one's heartbeat is fresh, and takes over once it stops", async () => {
      const { replayId, store } = await storedReplay();
      expect(await store.claim(replayId, 30)).toBe('claimed');
      expect(await store.claim(replayId, 30)).toBe('taken');
      await t.services
        .db('replays')
        .where({ id: replayId })
        .update({ heartbeat_at: new Date(Date.now() - 31_000) });
      expect(await store.claim(replayId, 30)).toBe('claimed');
      // A stopping worker's second job hands the replay back rather than wait for the first one.
      const job = new ReplayJob(
        store,
        new MySqlDecisionRecordStore(t.services.db),
        t.services.engine,
        { concurrency: 32, pageSize: 100 },
        createLogger('silent'),
      );
      expect(
        await job.run(
          { replayId },
          async () => undefined,
          () => true,
        ),
      ).toBe(false);
      expect(await store.find(replayId)).toMatchObject({ state: 'RUNNING' });
      // Claimed by hand with nobody running it: ended, or alice's next replays would wait their turn
      // behind it (an owner's replays run one at a time) until its heartbeat went stale.
      await t.services.db('replays').where({ id: replayId }).update({ state: 'FAILED' });
    });
  });
});

describe('numeric outputs and runs that fail in one version only', () => {
  it('reports the mean and p5/p50/p95 of new − old, and lists the runs that failed in one version but not the other', async () => {
    const id = await newScenario('numbers');
    const values = Array.from({ length: 200 }, (_, k) => k + 1);
    await recordBatch(
      t,
      alice,
      'numbers',
      values.map((a) => ({ a })),
    );
    // Old: doubled = 2a, fails at 13. Candidate: 3a, fails at 7.
    await putDevelop(
      t,
      id,
      chain(
        [input('a', 'INTEGER')],
        [
          script('explode', 'if (a === 7) { throw new Error("unlucky seven"); } ok = true;', ['ok']),
          script('triple', 'doubled = a * 3;', ['doubled']),
        ],
        { outputs: ['doubled'] },
      ),
    );

    const replay = await replayed(t, alice, id, { candidateVersion: 'develop', outputs: ['doubled'], sampleSize: 5 });

    const compared = values.filter((a) => a !== 7 && a !== 13);
    const sorted = [...compared].sort((x, y) => x - y); // new − old = 3a − 2a = a
    const rank = (p: number) => sorted[Math.ceil((p / 100) * sorted.length) - 1];
    const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
    expect(replay).toMatchObject({ state: 'FINISHED', total: 200, done: 200, failed: 1 });
    expect(replay.report).toMatchObject({ replayed: 200, compared: 198, changed: 200 });
    const [doubled] = replay.report.outputs;
    expect(doubled).toMatchObject({ compared: 198, changed: 198, otherTransitions: { pairs: 0, records: 0 } });
    expect(doubled.differences).toEqual({
      count: 198,
      meanOld: mean(compared.map((a) => 2 * a)),
      meanNew: mean(compared.map((a) => 3 * a)),
      mean: mean(compared),
      p5: rank(5),
      p50: rank(50),
      p95: rank(95),
      min: 1,
      max: 200,
    });
    expect(doubled.transitions).toHaveLength(198);
    expect(replay.report.failures).toMatchObject({
      onlyOld: 1,
      onlyNew: 1,
      both: 0,
      newErrorCodes: { SCRIPT_ERROR: 1 },
      truncated: false,
    });
    const failedRuns = Object.fromEntries(
      replay.report.failures.runs.map((run: { inputs: { a: number } }) => [run.inputs.a, run]),
    );
    expect(Object.keys(failedRuns).sort()).toEqual(['13', '7']);
    expect(failedRuns[13]).toMatchObject({
      old: { state: 'FAILED', result: null, error: { code: 'SCRIPT_ERROR' } },
      new: { state: 'SUCCEEDED', result: { doubled: 39 }, error: null },
    });
    expect(failedRuns[7]).toMatchObject({
      old: { state: 'SUCCEEDED', result: { doubled: 14 } },
      new: {
        state: 'FAILED',
        result: null,
        error: { code: 'SCRIPT_ERROR', message: expect.stringContaining('unlucky seven'), nodeId: 'explode' },
      },
    });
    expect(replay.report.sample).toHaveLength(5);
  });
});

describe('HTTP calls', () => {
  let bureau: http.Server;
  let bureauUrl: string;
  const answer = { score: (id: number) => 590 + (id % 50), requests: 0 };
  let scenarioId: string;
  const ids = Array.from({ length: 30 }, (_, k) => k + 1);

  const bureauCredit = (threshold: number, extra: TestNode[] = [], url = '/score/{{id}}') =>
    chain(
      [input('id', 'INTEGER')],
      [
        { id: 'bureau', type: 'HTTP_CALL', settings: { method: 'GET', url: `${bureauUrl}${url}`, output: 'bureau' } },
        {
          id: 'sub',
          type: 'SCENARIO_CALL',
          settings: { scenario: 'bureau-inner', inputs: { id: 'id' }, outputVariable: 'checked' },
        },
        ...extra,
        script(
          'decide',
          `decision = bureau.body.score + checked.inner.body.bonus >= ${threshold} ? "APPROVE" : "DECLINE";`,
          ['decision'],
        ),
      ],
      { outputs: ['decision'] },
    );

  beforeAll(async () => {
    bureau = http.createServer((req, res) => {
      answer.requests += 1;
      const id = Number((req.url ?? '').split('/').pop()?.split('?')[0]);
      const body = req.url?.startsWith('/inner/') ? { bonus: id % 2 === 0 ? 5 : 0 } : { score: answer.score(id) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => bureau.listen(0, '127.0.0.1', resolve));
    bureauUrl = `http://127.0.0.1:${(bureau.address() as AddressInfo).port}`;
    await newScenario(
      'bureau-inner',
      chain(
        [input('id', 'INTEGER')],
        [
          {
            id: 'ask',
            type: 'HTTP_CALL',
            settings: { method: 'GET', url: `${bureauUrl}/inner/{{id}}`, output: 'inner' },
          },
        ],
        { outputs: ['inner'] },
      ),
    );
    scenarioId = await newScenario('bureau-credit', bureauCredit(620));
    await recordBatch(
      t,
      alice,
      'bureau-credit',
      ids.map((id) => ({ id })),
    );
  });
  afterAll(async () => {
    bureau.closeAllConnections();
    await new Promise((resolve) => bureau.close(resolve));
  });

  it("get the recorded answers, called scenarios' included, and no call is made", async () => {
    // The bureau now answers something else: a replay that called it would see it.
    answer.score = () => 0;
    answer.requests = 0;
    await putDevelop(t, scenarioId, bureauCredit(610, [], '/score/{{id}}?model=2'));

    const replay = await replayed(t, alice, scenarioId, { candidateVersion: 'develop', outputs: ['decision'] });

    expect(answer.requests).toBe(0);
    const expected: Record<string, number> = {};
    for (const id of ids) {
      const total = 590 + (id % 50) + (id % 2 === 0 ? 5 : 0);
      const key = `${total >= 620 ? 'APPROVE' : 'DECLINE'}→${total >= 610 ? 'APPROVE' : 'DECLINE'}`;
      expected[key] = (expected[key] ?? 0) + 1;
    }
    expect(replay).toMatchObject({ state: 'FINISHED', total: 30, failed: 0 });
    expect(matrixOf(replay.report.outputs[0].transitions)).toEqual(expected);
    // Two calls a run (the node and the called scenario's); the node's URL changed, so its 30 requests differ.
    expect(replay.report.httpCalls).toEqual({ served: 60, requestDiffers: 30 });
    expect(replay.report.unrecorded).toEqual({ records: 0, calls: [] });
    expect(replay.report.notes).toEqual(
      expect.arrayContaining([expect.stringContaining('30 HTTP call(s) were sent with another method, URL or body')]),
    );
  });

  it('of a node with no recording are reported, not made, and the run is not compared', async () => {
    answer.requests = 0;
    await putDevelop(
      t,
      scenarioId,
      bureauCredit(620, [
        {
          id: 'fraud',
          type: 'HTTP_CALL',
          settings: {
            method: 'POST',
            url: `${bureauUrl}/fraud`,
            body: { id: '{{id}}' },
            output: 'fraud',
            catchErrors: true,
            errorOutput: 'fraudError',
          },
        },
      ]),
    );

    const replay = await replayed(t, alice, scenarioId, { candidateVersion: 'develop', outputs: ['decision'] });

    expect(answer.requests).toBe(0);
    expect(replay).toMatchObject({ state: 'FINISHED', total: 30, done: 30, failed: 30 });
    expect(replay.report).toMatchObject({
      replayed: 30,
      compared: 0,
      changed: 0,
      unrecorded: { records: 30, calls: [{ nodeId: 'fraud', callPath: [], records: 30 }] },
    });
    expect(replay.report.notes).toEqual(
      expect.arrayContaining([expect.stringContaining('30 record(s) were not compared')]),
    );
  });
});

describe('pii inputs', () => {
  it('reach the candidate masked, and the report says how many records had them', async () => {
    const id = await newScenario(
      'pii-replay',
      chain(
        [{ ...input('ssn', 'STRING'), tags: ['pii'] }, input('income', 'INTEGER')],
        [script('band', 'band = income > 1000 ? "high" : "low"; seen = ssn.slice(0, 4);', ['band', 'seen'])],
        { outputs: ['band', 'seen'] },
      ),
    );
    await recordBatch(
      t,
      alice,
      'pii-replay',
      Array.from({ length: 10 }, (_, k) => ({ ssn: `123-45-${1000 + k}`, income: 500 * k })),
    );

    const replay = await replayed(t, alice, id, { candidateVersion: '1', outputs: ['band', 'seen'] });

    expect(replay.report.maskedInputs).toEqual({ records: 10, variables: { ssn: 10 } });
    // The recorded runs read the real number; the candidate reads its mask.
    expect(replay.report.outputs[1]).toMatchObject({
      name: 'seen',
      changed: 10,
      transitions: [{ from: '123-', to: 'pii:', count: 10 }],
    });
    expect(replay.report.outputs[0]).toMatchObject({ name: 'band', changed: 0 });
    expect(replay.report.sample[0].inputs.ssn).toMatch(/^pii:[0-9a-f]{32}$/);
    expect(replay.report.notes).toEqual(
      expect.arrayContaining([expect.stringContaining('10 record(s) had pii inputs stored masked (ssn)')]),
    );
  });
});

describe('startReplay', () => {
  let id: string;
  const body = { candidateVersion: '1', outputs: ['doubled'] };
  beforeAll(async () => {
    id = await newScenario('statuses');
    await recordBatch(t, alice, 'statuses', [{ a: 1 }, { a: 2 }]);
  });

  it('answers 202 with the queued replay: its total and the filter it uses, never reaching past its start', async () => {
    const before = Date.now();
    const started = await startReplay(t, alice, id, { ...body, filter: { state: 'SUCCEEDED' } });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      scenarioId: id,
      candidateVersion: '1',
      total: 2,
      outputs: ['doubled'],
      limit: 5000,
      sampleSize: 20,
      report: null,
      error: null,
    });
    expect(['QUEUED', 'RUNNING', 'FINISHED']).toContain(started.body.state);
    expect(Date.parse(started.body.filter.to)).toBeGreaterThanOrEqual(before - 1);
    expect(started.body.filter.state).toBe('SUCCEEDED');
  });

  it('answers 401 without a bearer token', async () => {
    const response = await request(t.app).post(`/api/scenario/${id}/replays`).send(body);
    expect(response.status).toBe(401);
  });

  it("answers 403 for another user's scenario, and lets an admin start one", async () => {
    const refused = await startReplay(t, bob, id, body);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    expect((await startReplay(t, admin, id, body)).status).toBe(202);
  });

  it('answers 404 for an unknown scenario and for a version the scenario does not have', async () => {
    for (const unknown of ['999999999', 'credit']) {
      const response = await startReplay(t, alice, unknown, body);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('SCENARIO_NOT_FOUND');
    }
    for (const candidateVersion of ['9', 'develop']) {
      const response = await startReplay(t, alice, id, { ...body, candidateVersion });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'VERSION_NOT_FOUND', details: [{ path: 'body.candidateVersion' }] });
    }
  });

  it('answers 400 naming the field for a malformed request, and for a limit above REPLAY_MAX_RECORDS', async () => {
    const cases: Array<[unknown, string]> = [
      [{ candidateVersion: '1' }, 'outputs'],
      [{ ...body, candidateVersion: 'latest' }, 'candidateVersion'],
      [{ ...body, outputs: [] }, 'outputs'],
      [{ ...body, outputs: ['not a name'] }, 'outputs'],
      [{ ...body, limit: 100_001 }, 'limit'],
      [{ ...body, sampleSize: 201 }, 'sampleSize'],
      [{ ...body, filter: { state: 'LOST' } }, 'filter'],
      // Impossible date-times (an hour 25, 30 February) are refused by the spec's format, not turned into a 500.
      [{ ...body, filter: { to: '2026-11-23T25:00:00Z' } }, 'body.filter.to'],
      [{ ...body, filter: { from: '2026-02-30T00:00:00Z' } }, 'body.filter.from'],
      // Valid RFC 3339 but year 10000 in UTC: refused before any replay is made.
      [{ ...body, filter: { from: '9999-12-31T23:59:59-23:59' } }, 'body.filter.from'],
      [{ ...body, surprise: true }, 'surprise'],
    ];
    for (const [sent, field] of cases) {
      const response = await startReplay(t, alice, id, sent);
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    const tooMany = await startReplay(t, alice, id, { ...body, limit: 5001 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'body.limit', message: 'must be at most 5000' }],
    });
  });

  it('answers 409 REPLAY_LIMIT_REACHED while the owner has REPLAY_MAX_ACTIVE_PER_OWNER replays queued or running, and starts none', async () => {
    const dave = await t.newUser();
    await deployScenario(t.services.db, dave.id, 'busy', doublingScenario());
    const busy = await scenarioIdOf(t, dave.id, 'busy');
    const limits = t.services.config.replay;
    const before = limits.maxActivePerOwner;
    limits.maxActivePerOwner = 1;
    try {
      // A replay of dave's held RUNNING with a fresh heartbeat, as a long one would be (stored directly: no job races the test).
      const running = randomUUID();
      await new MySqlReplayStore(t.services.db, new UserStore(t.services.db)).insert({
        id: running,
        scenarioId: Number(busy),
        ownerId: dave.id,
        requesterId: dave.id,
        candidate: { label: '1', versionId: 1, contentHash: 'x'.repeat(64) },
        document: doublingScenario(),
        filter: {},
        outputs: ['doubled'],
        limit: 10,
        sampleSize: 0,
        total: 0,
      });
      await t.services
        .db('replays')
        .where({ id: running })
        .update({ state: 'RUNNING', heartbeat_at: t.services.db.fn.now(3) });
      const second = await startReplay(t, dave, busy, { candidateVersion: '1', outputs: ['doubled'] });
      expect(second.status).toBe(409);
      expect(second.body).toMatchObject({
        code: 'REPLAY_LIMIT_REACHED',
        message: expect.stringMatching(/REPLAY_MAX_ACTIVE_PER_OWNER/),
      });
      expect(
        await t.services
          .db('replays')
          .where({ scenario_id: Number(busy) })
          .count({ n: '*' }),
      ).toEqual([{ n: 1 }]);
      // Another owner is not held back by it.
      const erin = await t.newUser();
      await deployScenario(t.services.db, erin.id, 'idle', doublingScenario());
      expect((await startReplay(t, erin, await scenarioIdOf(t, erin.id, 'idle'), body)).status).toBe(202);
      // Once it has ended, the owner may start another.
      await t.services.db('replays').where({ id: running }).update({ state: 'FINISHED' });
      expect((await startReplay(t, dave, busy, { candidateVersion: '1', outputs: ['doubled'] })).status).toBe(202);
    } finally {
      limits.maxActivePerOwner = before;
    }
  });

  it('answers 422 COMPILE_ERROR for a candidate that does not compile', async () => {
    await putDevelop(t, id, chain([input('a', 'INTEGER')], [script('broken', 'doubled = a * ;', ['doubled'])]));
    const response = await startReplay(t, alice, id, { ...body, candidateVersion: 'develop' });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('COMPILE_ERROR');
  });
});

describe('getReplay', () => {
  let id: string;
  let replayId: string;
  beforeAll(async () => {
    id = await newScenario('read-me');
    await recordBatch(t, alice, 'read-me', [{ a: 3 }]);
    replayId = (await replayed(t, alice, id, { candidateVersion: '1', outputs: ['doubled'] })).replayId;
  });

  it('answers 200 to the owner and to an admin', async () => {
    for (const user of [alice, admin]) {
      const response = await getReplay(t, user, id, replayId);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        replayId,
        state: 'FINISHED',
        total: 1,
        done: 1,
        report: { replayed: 1, changed: 0 },
      });
      expect(Date.parse(response.body.finishedAt)).toBeGreaterThanOrEqual(Date.parse(response.body.startedAt));
    }
  });

  it('answers 401 without a bearer token and 403 to another user', async () => {
    expect((await request(t.app).get(`/api/scenario/${id}/replays/${replayId}`)).status).toBe(401);
    const refused = await getReplay(t, bob, id, replayId);
    expect(refused.status).toBe(403);
  });

  it("answers 404 REPLAY_NOT_FOUND for an unknown replay and for another scenario's", async () => {
    const otherId = await newScenario('read-me-not');
    for (const [scenario, replay] of [
      [id, 'no-such-replay'],
      [otherId, replayId],
    ]) {
      const response = await getReplay(t, alice, scenario, replay);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('REPLAY_NOT_FOUND');
    }
  });
});

describe('listReplays', () => {
  let id: string;
  let otherId: string;
  const replayIds: string[] = [];
  const list = (user: TestUser, scenarioId: string, query: Record<string, unknown> = {}) =>
    request(t.app).get(`/api/scenario/${scenarioId}/replays`).query(query).set(bearer(user));
  beforeAll(async () => {
    id = await newScenario('list-me');
    otherId = await newScenario('list-me-not');
    await recordBatch(t, alice, 'list-me', [{ a: 1 }, { a: 2 }]);
    await recordBatch(t, alice, 'list-me-not', [{ a: 1 }]);
    for (let k = 0; k < 3; k += 1)
      replayIds.push((await replayed(t, alice, id, { candidateVersion: '1', outputs: ['doubled'] })).replayId);
    await replayed(t, alice, otherId, { candidateVersion: '1', outputs: ['doubled'] });
  });

  it("answers 200 with the scenario's replays, newest first, without reports, with their count of changed records", async () => {
    const response = await list(alice, id);
    expect(response.status).toBe(200);
    expect(response.body.nextCursor).toBeNull();
    expect(response.body.replays.map((replay: { replayId: string }) => replay.replayId)).toEqual(
      [...replayIds].reverse(),
    );
    expect(response.body.replays[0]).toMatchObject({
      scenarioId: id,
      candidateVersion: '1',
      state: 'FINISHED',
      total: 2,
      done: 2,
      failed: 0,
      outputs: ['doubled'],
      changed: 0,
    });
    expect(response.body.replays[0]).not.toHaveProperty('report');
  });

  it('pages with `limit` and `nextCursor`, and answers 400 naming a cursor it did not issue', async () => {
    const first = await list(alice, id, { limit: 2 });
    expect(first.body.replays.map((replay: { replayId: string }) => replay.replayId)).toEqual([
      replayIds[2],
      replayIds[1],
    ]);
    const second = await list(alice, id, { limit: 2, cursor: first.body.nextCursor });
    expect(second.body).toMatchObject({ replays: [{ replayId: replayIds[0] }], nextCursor: null });
    for (const cursor of ['nonsense', Buffer.from(`p1:${replayIds[0]}' OR 1=1`).toString('base64url')]) {
      const refused = await list(alice, id, { cursor });
      expect(refused.status).toBe(400);
      expect(refused.body.details).toEqual([expect.objectContaining({ path: 'query.cursor' })]);
    }
    expect((await list(alice, id, { limit: 101 })).status).toBe(400);
  });

  it('shows a replay that has not finished with changed null', async () => {
    const started = await startReplay(t, alice, otherId, { candidateVersion: '1', outputs: ['doubled'] });
    const listed = (await list(alice, otherId)).body.replays.find(
      (replay: { replayId: string }) => replay.replayId === started.body.replayId,
    );
    if (listed.state !== 'FINISHED') expect(listed.changed).toBeNull();
    else expect(listed.changed).toBe(0);
  });

  it('answers 200 to an admin, 401 without a bearer token, 403 to another user and 404 for an unknown scenario', async () => {
    expect((await list(admin, id)).body.replays).toHaveLength(3);
    expect((await request(t.app).get(`/api/scenario/${id}/replays`)).status).toBe(401);
    expect((await list(bob, id)).status).toBe(403);
    const unknown = await list(alice, '987654321');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('SCENARIO_NOT_FOUND');
  });
});

describe('a replay of a candidate whose every run loops to its time limit', () => {
  it("does not hold up its owner's own sync scores while it runs, and still finishes", async () => {
    const scenarioId = await newScenario('loop-candidate', scriptScenario('out = a + 1;'));
    await recordBatch(
      t,
      alice,
      'loop-candidate',
      Array.from({ length: 6 }, (_, a) => ({ a })),
    );
    await putDevelop(t, scenarioId, scriptScenario('while (true) {} out = a;'));
    const started = await startReplay(t, alice, scenarioId, { candidateVersion: 'develop', outputs: ['out'] });
    expect(started.status).toBe(202);
    await waitFor(
      async () =>
        (await getReplay(t, alice, scenarioId, started.body.replayId)).body.state === 'RUNNING' ? true : undefined,
      10_000,
      20,
    );

    // 6 runs of 1,000 ms each are queued or running on the engine pool now; the owner's scores go first.
    for (let a = 0; a < 5; a++) {
      const begun = Date.now();
      const scored = await request(t.app)
        .post('/api/scenario/code/remote/score')
        .query({ name: 'loop-candidate' })
        .set('Score-Token', alice.scoreToken)
        .send({ a });
      expect(scored.status).toBe(200);
      expect(scored.body).toMatchObject({ state: 'SUCCEEDED', result: { out: a + 1 } });
      expect(Date.now() - begun).toBeLessThan(500);
    }

    const replay = await waitFor(async () => {
      const { body } = await getReplay(t, alice, scenarioId, started.body.replayId);
      return body.state === 'FINISHED' ? body : undefined;
    }, 30_000);
    expect(replay).toMatchObject({ total: 6, done: 6, failed: 6 });
    expect(replay.report.failures).toMatchObject({ onlyNew: 6, newErrorCodes: { TIME_LIMIT_EXCEEDED: 6 } });
  }, 40_000);
});
