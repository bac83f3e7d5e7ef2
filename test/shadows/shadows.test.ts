import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { chain, input, script } from '../engine/support/scenario-builder.js';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { bearer, putDevelop, scenarioIdOf } from '../replay/support.js';
import { scriptScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import {
  deployedScenarioId,
  scoreAs,
  attachShadow,
  getShadow,
  shadowAction,
  shadowWithRuns,
  storedShadowRuns,
} from './support.js';
import type { ScenarioDocument } from '../../src/engine/index.js';

/** Shadows (issue 32, docs/live-tests.md): a version run beside the live one on live traffic, and its report. */

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;

beforeAll(async () => {
  isolateJobStore('shadows');
  t = await createTestApp({ configOverrides: { outboundAllowList: ['127.0.0.1'] } });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  bob = await t.newUser();
  admin = await t.newUser({ admin: true });
});
afterAll(() => t.close());

const newScenario = (name: string, doc?: ScenarioDocument) => deployedScenarioId(t, alice, name, doc);
const score = (name: string, inputs: Record<string, unknown>) => scoreAs(t, alice, name, inputs);

const tripling = () => scriptScenario('if (a === 13) { throw new Error("unlucky thirteen"); } out = a * 3;');

describe('a shadow on live traffic', () => {
  it('runs beside sync, async and batch runs, linked by run id, and its report compares the two', async () => {
    const scenarioId = await newScenario('shadowed', scriptScenario('out = a * 2;'));
    await putDevelop(t, scenarioId, tripling());
    const attached = await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['out'] });
    expect(attached.status).toBe(201);
    expect(attached.body).toMatchObject({
      version: 'develop',
      championVersion: '1',
      sampleRate: 1,
      state: 'RUNNING',
      skipped: 0,
      createdBy: alice.username,
      report: { replayed: 0 },
    });
    const shadowId = attached.body.shadowId as string;

    const sync = [];
    for (const a of [1, 2, 3, 4, 13]) sync.push(await score('shadowed', { a }));
    expect(sync.map((answer) => [answer.status, answer.body.result])).toEqual([
      [200, { out: 2 }],
      [200, { out: 4 }],
      [200, { out: 6 }],
      [200, { out: 8 }],
      [200, { out: 26 }],
    ]);
    const submitted = await request(t.app)
      .post('/api/scenario/code/scoreasync/shadowed')
      .set('Score-Token', alice.scoreToken)
      .send({ a: 5 });
    expect(submitted.status).toBe(202);
    const batch = await request(t.app)
      .post('/api/batch/score')
      .set('Score-Token', alice.scoreToken)
      .send({ scenarioName: 'shadowed', parameters: [{ a: 6 }, { a: 7 }] });
    expect(batch.status).toBe(202);

    const shadow = await shadowWithRuns(t, alice, scenarioId, shadowId, 8);
    const report = shadow.report;
    expect(report).toMatchObject({ replayed: 8, compared: 7, changed: 8 });
    expect(report.outputs[0].differences).toMatchObject({ count: 7, mean: (1 + 2 + 3 + 4 + 5 + 6 + 7) / 7 });
    expect(report.outputs[0].transitions).toHaveLength(7);
    expect(report.failures).toMatchObject({ onlyOld: 0, onlyNew: 1, both: 0, newErrorCodes: { SCRIPT_ERROR: 1 } });
    // The failed shadow run is shown beside the champion's, under the champion's run id.
    expect(report.failures.runs[0]).toMatchObject({
      recordId: sync[4].body.runId,
      old: { state: 'SUCCEEDED', result: { out: 26 } },
      new: { state: 'FAILED' },
    });
    const runIds = (await t.services.db('shadow_runs').where({ shadow_id: shadowId }).pluck('run_id')) as string[];
    expect(runIds).toEqual(expect.arrayContaining(sync.map((answer) => answer.body.runId as string)));
  });

  it('runs a shadow only at its sample rate: 0 runs none', async () => {
    const scenarioId = await newScenario('unsampled');
    await putDevelop(t, scenarioId, tripling());
    const attached = await attachShadow(t, alice, scenarioId, {
      version: 'develop',
      sampleRate: 0,
      outputs: ['doubled'],
    });
    for (let a = 1; a <= 5; a += 1) expect((await score('unsampled', { a })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await storedShadowRuns(t, attached.body.shadowId)).toBe(0);
  });
});

describe('HTTP calls of a shadow', () => {
  let bureau: http.Server;
  let bureauUrl: string;
  let calls = 0;

  beforeAll(async () => {
    bureau = http.createServer((req, res) => {
      calls += 1;
      const id = Number((req.url ?? '').split('/').pop());
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ score: 600 + id }));
    });
    await new Promise<void>((resolve) => bureau.listen(0, '127.0.0.1', resolve));
    bureauUrl = `http://127.0.0.1:${(bureau.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    bureau.closeAllConnections();
    await new Promise((resolve) => bureau.close(resolve));
  });

  const bureauCredit = (cutoff: number) =>
    chain(
      [input('id', 'INTEGER')],
      [
        {
          id: 'bureau',
          type: 'HTTP_CALL',
          settings: { method: 'GET', url: `${bureauUrl}/score/{{id}}`, output: 'bureau' },
        },
        script('decide', `decision = bureau.body.score >= ${cutoff} ? "APPROVE" : "DECLINE";`, ['decision']),
      ],
      { outputs: ['decision'] },
    );

  it('are answered from the champion run\u2019s own captures: the bureau is called once per live run, never by the shadow', async () => {
    const scenarioId = await newScenario('bureau-shadowed', bureauCredit(610));
    await putDevelop(t, scenarioId, bureauCredit(620));
    const attached = await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['decision'] });
    calls = 0;
    const ids = [5, 12, 15, 25, 30];
    for (const id of ids) expect((await score('bureau-shadowed', { id })).status).toBe(200);
    const shadow = await shadowWithRuns(t, alice, scenarioId, attached.body.shadowId, ids.length);
    expect(calls).toBe(ids.length);
    expect(shadow.report.httpCalls).toEqual({ served: ids.length, requestDiffers: 0 });
    expect(shadow.report.outputs[0].transitions).toEqual(
      expect.arrayContaining([
        // Scores 605, 612, 615, 625, 630: the cut-off raised from 610 to 620 turns 612 and 615 down.
        { from: 'APPROVE', to: 'DECLINE', count: 2 },
        { from: 'APPROVE', to: 'APPROVE', count: 2 },
        { from: 'DECLINE', to: 'DECLINE', count: 1 },
      ]),
    );
  });
});

describe('stop, start, and a deploy', () => {
  it('stop pauses the shadow, start resumes it, and a deploy ends it with its report frozen', async () => {
    const scenarioId = await newScenario('lifecycle');
    await putDevelop(t, scenarioId, tripling());
    const { body: attached } = await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['doubled'] });
    expect((await score('lifecycle', { a: 1 })).status).toBe(200);
    await shadowWithRuns(t, alice, scenarioId, attached.shadowId, 1);

    const stopped = await shadowAction(t, alice, scenarioId, attached.shadowId, 'stop');
    expect(stopped.body).toMatchObject({ state: 'STOPPED', stoppedAt: expect.any(String) });
    expect((await score('lifecycle', { a: 2 })).status).toBe(200);
    expect((await shadowAction(t, alice, scenarioId, attached.shadowId, 'stop')).body.state).toBe('STOPPED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await storedShadowRuns(t, attached.shadowId)).toBe(1);

    expect((await shadowAction(t, alice, scenarioId, attached.shadowId, 'start')).body).toMatchObject({
      state: 'RUNNING',
      stoppedAt: null,
    });
    expect((await score('lifecycle', { a: 3 })).status).toBe(200);
    await shadowWithRuns(t, alice, scenarioId, attached.shadowId, 2);

    const deployed = await request(t.app)
      .post(`/api/scenario/deploy/${scenarioId}?skip_validation=true`)
      .set(bearer(alice));
    expect(deployed.status).toBe(204);
    const ended = await getShadow(t, alice, scenarioId, attached.shadowId);
    expect(ended.body).toMatchObject({
      state: 'ENDED',
      endedReason: 'version 2 was deployed as champion',
      endedAt: expect.any(String),
      report: { replayed: 2 },
    });
    expect((await score('lifecycle', { a: 4 })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await storedShadowRuns(t, attached.shadowId)).toBe(2);
    const restarted = await shadowAction(t, alice, scenarioId, attached.shadowId, 'start');
    expect([restarted.status, restarted.body.code]).toEqual([409, 'SHADOW_ENDED']);
    const listed = await request(t.app).get(`/api/scenario/${scenarioId}/shadows`).set(bearer(alice));
    expect(listed.body.shadows).toEqual([expect.objectContaining({ shadowId: attached.shadowId, state: 'ENDED' })]);
    expect(listed.body.shadows[0].report).toBeUndefined();
  });

  it('refuses an unknown version, a scenario never deployed, and more than SHADOW_MAX_PER_SCENARIO shadows', async () => {
    const scenarioId = await newScenario('limits');
    await putDevelop(t, scenarioId, tripling());
    const unknown = await attachShadow(t, alice, scenarioId, { version: '7', outputs: ['doubled'] });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'VERSION_NOT_FOUND']);
    for (let k = 0; k < t.services.config.shadows.maxPerScenario; k += 1)
      expect((await attachShadow(t, alice, scenarioId, { version: '1', outputs: ['doubled'] })).status).toBe(201);
    const refused = await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['doubled'] });
    expect([refused.status, refused.body.code]).toEqual([409, 'SHADOW_LIMIT_REACHED']);
    await t.services.db('scenarios').insert({ owner_id: alice.id, name: 'never-deployed' });
    const undeployed = await attachShadow(t, alice, await scenarioIdOf(t, alice.id, 'never-deployed'), {
      version: 'develop',
      outputs: ['doubled'],
    });
    expect([undeployed.status, undeployed.body.code]).toEqual([404, 'SCENARIO_NOT_DEPLOYED']);
  });
});

describe('who may', () => {
  it('owners and admins: another user\u2019s scenario is 403, another scenario\u2019s shadow 404, an unknown scenario 404', async () => {
    const scenarioId = await newScenario('guarded');
    const other = await newScenario('guarded-other');
    const { body: attached } = await attachShadow(t, alice, scenarioId, { version: '1', outputs: ['doubled'] });
    expect((await attachShadow(t, bob, scenarioId, { version: '1', outputs: ['doubled'] })).status).toBe(403);
    expect((await getShadow(t, bob, scenarioId, attached.shadowId)).status).toBe(403);
    expect((await shadowAction(t, bob, scenarioId, attached.shadowId, 'stop')).status).toBe(403);
    expect((await request(t.app).get(`/api/scenario/${scenarioId}/shadows`).set(bearer(bob))).status).toBe(403);
    const elsewhere = await getShadow(t, alice, other, attached.shadowId);
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, 'SHADOW_NOT_FOUND']);
    const unknown = await getShadow(t, alice, '999999999', attached.shadowId);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'SCENARIO_NOT_FOUND']);
    expect(
      (await request(t.app).get(`/api/scenario/${scenarioId}/shadows/${attached.shadowId}`).set(bearer(admin))).status,
    ).toBe(200);
    expect((await request(t.app).get(`/api/scenario/${scenarioId}/shadows`)).status).toBe(401);
    expect(await waitFor(async () => ((await storedShadowRuns(t, attached.shadowId)) === 0 ? true : undefined))).toBe(
      true,
    );
  });
});
