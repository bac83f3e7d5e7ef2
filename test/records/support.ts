import request from 'supertest';
import type { TestApp, TestUser } from '../support/test-app.js';

/** The id of a user's scenario, by name. */
export async function scenarioIdOf(t: TestApp, ownerId: number, name: string): Promise<string> {
  const row = (await t.services.db('scenarios').where({ owner_id: ownerId, name }).first('id')) as
    | { id: number }
    | undefined;
  if (!row) throw new Error(`no scenario ${name} of user ${ownerId}`);
  return String(row.id);
}

export const bearer = (user: TestUser) => ({ Authorization: `Bearer ${user.accessToken}` });

export function listRecords(t: TestApp, user: TestUser, scenarioId: string, query: Record<string, unknown> = {}) {
  return request(t.app).get(`/api/scenario/${scenarioId}/records`).query(query).set(bearer(user));
}

export function getRecord(t: TestApp, user: TestUser, scenarioId: string, recordId: string) {
  return request(t.app)
    .get(`/api/scenario/${scenarioId}/records/${encodeURIComponent(recordId)}`)
    .set(bearer(user));
}

export function putSettings(t: TestApp, user: TestUser, scenarioId: string, settings: unknown) {
  return request(t.app)
    .put(`/api/scenario/${scenarioId}/recording`)
    .set(bearer(user))
    .send(settings as object);
}

/** Every record of a scenario, newest first, once the recorder has stored what it holds. */
export async function recordsOf(
  t: TestApp,
  user: TestUser,
  scenarioId: string,
  query: Record<string, unknown> = {},
): Promise<Array<Record<string, any>>> {
  await t.services.records.recorder.flush();
  const response = await listRecords(t, user, scenarioId, { limit: 500, ...query });
  if (response.status !== 200)
    throw new Error(`listDecisionRecords: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.records;
}
