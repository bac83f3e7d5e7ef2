import { afterAll, beforeAll, expect, it } from '@jest/globals';
import request from 'supertest';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { bearer, putDevelop, scenarioIdOf } from '../replay/support.js';
import { deployScenario, scriptScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { attachShadow, getShadow, shadowAction, shadowWithRuns, storedShadowRuns } from './support.js';

/** Retention of shadow and split runs (LIVE_TEST_RUNS_RETENTION_DAYS, docs/live-tests.md "Retention"). */

let t: TestApp;
let alice: TestUser;

const NOW = new Date();
const DAY_MS = 86_400_000;

beforeAll(async () => {
  isolateJobStore('live-test-retention');
  t = await createTestApp({ configOverrides: { shadows: { ...defaults(), runsRetentionDays: 30 } } });
  alice = await t.newUser();
});
afterAll(() => t.close());

function defaults() {
  return { engineShare: 1, maxInFlight: 256, maxPerScenario: 5 };
}

function score(name: string, inputs: Record<string, unknown>) {
  return request(t.app)
    .post(`/api/scenario/code/remote/score?name=${name}`)
    .set('Score-Token', alice.scoreToken)
    .send(inputs);
}

/** Moves the stored time of a test's runs back `days` days (those with the `count` lowest ids). */
async function age(table: 'shadow_runs' | 'split_runs', column: string, testId: string, count: number, days: number) {
  const ids = (await t.services.db(table).where(column, testId).orderBy('id').limit(count).pluck('id')) as number[];
  await t.services
    .db(table)
    .whereIn('id', ids)
    .update({ created_at: new Date(NOW.getTime() - days * DAY_MS) });
}

it('deletes shadow and split runs stored before the retention; a report folded before keeps them, one folded after counts those kept', async () => {
  await deployScenario(t.services.db, alice.id, 'kept', scriptScenario('out = a < 5 ? "LOW" : "HIGH";'));
  const scenarioId = await scenarioIdOf(t, alice.id, 'kept');
  await putDevelop(t, scenarioId, scriptScenario('out = a < 3 ? "LOW" : "HIGH";'));
  const shadowId = (await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['out'] })).body
    .shadowId as string;
  for (let a = 0; a < 6; a += 1) expect((await score('kept', { a })).status).toBe(200);
  const before = await shadowWithRuns(t, alice, scenarioId, shadowId, 6);
  expect(before.report.replayed).toBe(6);

  // Stopped, so the runs below go to the split only.
  expect((await shadowAction(t, alice, scenarioId, shadowId, 'stop')).status).toBe(200);
  const split = await request(t.app)
    .post(`/api/scenario/${scenarioId}/splits`)
    .set(bearer(alice))
    .send({ challengers: [{ version: 'develop', percent: 50 }], decisionOutput: 'out' });
  expect(split.status).toBe(201);
  const splitId = split.body.splitId as string;
  for (let a = 0; a < 10; a += 1) expect((await score('kept', { a })).status).toBe(200);
  await t.services.shadows.splitWriter.flush();

  // The five oldest shadow runs stored 29 days ago, then the four oldest 31: the fifth stays.
  await age('shadow_runs', 'shadow_id', shadowId, 5, 29);
  await age('shadow_runs', 'shadow_id', shadowId, 4, 31);
  await age('split_runs', 'split_id', splitId, 3, 31);
  const deleted = await t.services.shadows.retention.sweepOnce(NOW);
  expect(deleted).toBe(7);
  expect(await storedShadowRuns(t, shadowId)).toBe(2);
  const [{ n }] = await t.services.db('split_runs').where({ split_id: splitId }).count({ n: '*' });
  expect(Number(n)).toBe(7);
  // Nothing more to delete: a second sweep finds nothing.
  expect(await t.services.shadows.retention.sweepOnce(NOW)).toBe(0);

  // The report this process folded before the sweep is whole: its cursor is past the deleted runs.
  const after = await getShadow(t, alice, scenarioId, shadowId);
  expect(after.body.report.replayed).toBe(6);
  // A process folding it anew (a new report fold: another API process) counts the runs kept, and folds on from there.
  const fresh = await createTestApp({ configOverrides: { shadows: { ...defaults(), runsRetentionDays: 30 } } });
  try {
    const { body } = await request(fresh.app).get(`/api/scenario/${scenarioId}/shadows/${shadowId}`).set(bearer(alice));
    expect(body.report.replayed).toBe(2);
  } finally {
    await fresh.close();
  }
  const splitReport = await waitFor(async () => {
    const { body } = await request(t.app).get(`/api/scenario/${scenarioId}/splits/${splitId}`).set(bearer(alice));
    return body.report.runs === 7 ? body.report : undefined;
  });
  expect(splitReport.runs).toBe(7);
}, 60_000);
