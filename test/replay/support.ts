import request from 'supertest';
import type { ScenarioDocument } from '../../src/engine/index.js';
import { waitFor } from '../execution/support.js';
import type { TestApp, TestUser } from '../support/test-app.js';
import { bearer, scenarioIdOf } from '../records/support.js';
import { storedRecordCount } from '../records/stored-records.js';

export { bearer, scenarioIdOf };

export function startReplay(t: TestApp, user: TestUser, scenarioId: string, body: unknown) {
  return request(t.app)
    .post(`/api/scenario/${scenarioId}/replays`)
    .set(bearer(user))
    .send(body as object);
}

export function getReplay(t: TestApp, user: TestUser, scenarioId: string, replayId: string) {
  return request(t.app)
    .get(`/api/scenario/${scenarioId}/replays/${encodeURIComponent(replayId)}`)
    .set(bearer(user));
}

/** Starts a replay and answers it once FINISHED (or FAILED). */
export async function replayed(
  t: TestApp,
  user: TestUser,
  scenarioId: string,
  body: unknown,
): Promise<Record<string, any>> {
  const started = await startReplay(t, user, scenarioId, body);
  if (started.status !== 202) throw new Error(`startReplay: ${started.status} ${JSON.stringify(started.body)}`);
  return waitFor(async () => {
    const { body: replay } = await getReplay(t, user, scenarioId, started.body.replayId);
    return replay.state === 'FINISHED' || replay.state === 'FAILED' ? replay : undefined;
  }, 30_000);
}

/** Creates or replaces the scenario's development version (the candidate of a replay of `develop`). */
export async function putDevelop(t: TestApp, scenarioId: string, doc: ScenarioDocument): Promise<void> {
  const values = { content: doc.content, node_properties: JSON.stringify(doc.nodeProperties) };
  const updated = await t.services
    .db('scenario_versions')
    .where({ scenario_id: Number(scenarioId), status: 'DEVELOP' })
    .update(values);
  if (updated === 0)
    await t.services.db('scenario_versions').insert({
      ...values,
      scenario_id: Number(scenarioId),
      status: 'DEVELOP',
      version_number: null,
      source_version: 'import',
    });
}

/** Scores every input set in one batch (the real recording path) and waits until all are recorded. */
export async function recordBatch(
  t: TestApp,
  user: TestUser,
  scenarioName: string,
  parameters: Array<Record<string, unknown>>,
): Promise<void> {
  const scenarioId = await scenarioIdOf(t, user.id, scenarioName);
  const before = await recordCount(t, scenarioId);
  const submitted = await request(t.app)
    .post('/api/batch/score')
    .set('Score-Token', user.scoreToken)
    .send({ scenarioName, parameters });
  if (submitted.status !== 202) throw new Error(`submitBatch: ${submitted.status} ${JSON.stringify(submitted.body)}`);
  await waitFor(
    async () => {
      await t.services.records.recorder.flush();
      return (await recordCount(t, scenarioId)) >= before + parameters.length ? true : undefined;
    },
    30_000,
    50,
  );
}

async function recordCount(t: TestApp, scenarioId: string): Promise<number> {
  return storedRecordCount(t.services.db, scenarioId);
}

/** Deterministic pseudo-random integers in [0, n) (a linear congruential generator), so a failure can be run again. */
export function randomInts(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

/** `{ "from→to": count }` of a report's transitions, for comparing with a matrix computed independently. */
export function matrixOf(transitions: Array<{ from: unknown; to: unknown; count: number }>): Record<string, number> {
  return Object.fromEntries(transitions.map(({ from, to, count }) => [`${String(from)}→${String(to)}`, count]));
}
