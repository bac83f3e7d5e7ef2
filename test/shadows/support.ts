import request from 'supertest';
import type { ScenarioDocument } from '../../src/engine/index.js';
import { waitFor } from '../execution/support.js';
import { scenarioIdOf } from '../replay/support.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import type { TestApp, TestUser } from '../support/test-app.js';
import { bearer } from '../records/support.js';

export function attachShadow(t: TestApp, user: TestUser, scenarioId: string, body: unknown) {
  return request(t.app)
    .post(`/api/scenario/${scenarioId}/shadows`)
    .set(bearer(user))
    .send(body as object);
}

export function getShadow(t: TestApp, user: TestUser, scenarioId: string, shadowId: string) {
  return request(t.app)
    .get(`/api/scenario/${scenarioId}/shadows/${encodeURIComponent(shadowId)}`)
    .set(bearer(user));
}

export function shadowAction(
  t: TestApp,
  user: TestUser,
  scenarioId: string,
  shadowId: string,
  action: 'stop' | 'start',
) {
  return request(t.app)
    .post(`/api/scenario/${scenarioId}/shadows/${encodeURIComponent(shadowId)}/${action}`)
    .set(bearer(user));
}

/** The shadow once its report has folded `runs` shadow runs (the writer flushed, the runs settled). */
export async function shadowWithRuns(
  t: TestApp,
  user: TestUser,
  scenarioId: string,
  shadowId: string,
  runs: number,
): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      await t.services.shadows.writer.flush();
      const { body } = await getShadow(t, user, scenarioId, shadowId);
      return body.report && body.report.replayed >= runs ? body : undefined;
    },
    20_000,
    100,
  );
}

/** Shadow runs stored for the shadow (its table, not the report). */
export async function storedShadowRuns(t: TestApp, shadowId: string): Promise<number> {
  await t.services.shadows.writer.flush();
  const [{ n }] = await t.services.db('shadow_runs').where({ shadow_id: shadowId }).count({ n: '*' });
  return Number(n);
}

/** Deploys `doc` as `name`, owned by `user`, and answers its id. */
export async function deployedScenarioId(
  t: TestApp,
  user: TestUser,
  name: string,
  doc: ScenarioDocument = doublingScenario(),
): Promise<string> {
  await deployScenario(t.services.db, user.id, name, doc);
  return scenarioIdOf(t, user.id, name);
}

/** A sync score of the deployed scenario `name` with `user`'s score token. */
export function scoreAs(t: TestApp, user: TestUser, name: string, inputs: Record<string, unknown>) {
  return request(t.app)
    .post(`/api/scenario/code/remote/score?name=${name}`)
    .set('Score-Token', user.scoreToken)
    .send(inputs);
}
