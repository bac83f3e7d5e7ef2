import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { contextFor, createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * getScenarioStatistics after known traffic through the API (sync scores, a batch, an async run;
 * runs of two versions), and its errors. Exact figures from a pinned clock: run-statistics-recorder.test.ts.
 */
let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let root: TestUser;
let scenarioId: string;

beforeAll(async () => {
  isolateJobStore('statistics');
  t = await createTestApp();
  await t.services.execution.startWorker();
  alice = await t.newUser();
  bob = await t.newUser();
  root = await t.newUser({ admin: true, prefix: 'admin' });
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  scenarioId = String((await t.services.db('scenarios').where({ owner_id: alice.id, name: 'double' }).first('id')).id);
});
afterAll(async () => {
  await t.close();
});

const statistics = (id: string, query: Record<string, string> = {}, user: TestUser = alice) =>
  request(t.app)
    .get(`/api/scenario/${encodeURIComponent(id)}/statistics`)
    .query({ context: user.context(), ...query })
    .set('Authorization', `Bearer ${user.accessToken}`);
const score = (a: unknown) =>
  request(t.app).post('/api/scenario/code/remote/score?name=double').set('Score-Token', alice.scoreToken).send({ a });

describe('getScenarioStatistics after known traffic', () => {
  let window: { from: string; to: string };

  beforeAll(async () => {
    const from = new Date(Date.now() - 1000).toISOString();
    // Version 1: three sync scores and a failure.
    for (const a of [1, 2, 3, 13]) await score(a);
    // Version 2: two sync scores, a batch of five with one failure, an async run.
    await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
    t.services.deployedScenarios.invalidate(alice.id, 'double');
    for (const a of [4, 'x']) await score(a);
    const batch = await request(t.app)
      .post('/api/batch/score')
      .set('Score-Token', alice.scoreToken)
      .send({ scenarioName: 'double', parameters: [{ a: 1 }, { a: 2 }, { a: 13 }, { a: 4 }, { a: 5 }] });
    const submitted = await request(t.app)
      .post('/api/scenario/code/scoreasync/double')
      .set('Score-Token', alice.scoreToken)
      .send({ a: 6 });
    await waitFor(async () =>
      (await request(t.app).get(`/api/batch/${batch.body.batchTaskId}`).set('Score-Token', alice.scoreToken)).body
        .state === 'FINISHED'
        ? true
        : undefined,
    );
    await waitFor(async () =>
      (
        await request(t.app)
          .get('/api/scenario/code/scoreasyncresult/double')
          .set('Score-Token', alice.scoreToken)
          .set('X-SCE-RequestId', submitted.body.requestId)
      ).status === 200
        ? true
        : undefined,
    );
    // A debug run is not counted.
    expect(
      (
        await request(t.app)
          .post(`/api/scenario/debug/${scenarioId}`)
          .query({ context: alice.context() })
          .set('Authorization', `Bearer ${alice.accessToken}`)
          .send({ a: 1 })
      ).status,
    ).toBe(200);
    await t.services.statistics.recorder.flush();
    window = { from, to: new Date(Date.now() + 1000).toISOString() };
  });

  it('answers counts, errors, peak and latencies per version, newest first, and in total', async () => {
    const response = await statistics(scenarioId, window);
    expect(response.status).toBe(200);
    const { body } = response;
    expect(body).toMatchObject({ scenarioId, name: 'double' });
    expect(body.total).toMatchObject({ count: 12, errors: 3, byMode: { sync: 6, async: 1, batch: 5 } });
    expect(body.versions.map((entry: { version: string }) => entry.version)).toEqual(['2', '1']);
    expect(body.versions[0]).toMatchObject({
      version: '2',
      count: 8,
      errors: 2,
      byMode: { sync: 2, async: 1, batch: 5 },
    });
    expect(body.versions[1]).toMatchObject({
      version: '1',
      count: 4,
      errors: 1,
      byMode: { sync: 4, async: 0, batch: 0 },
    });
    for (const entry of [body.total, ...body.versions]) {
      const { min, avg, max, p95 } = entry.latencyMs;
      expect(min).toBeGreaterThan(0);
      expect(min).toBeLessThanOrEqual(avg);
      expect(avg).toBeLessThanOrEqual(max);
      expect(p95).toBeGreaterThanOrEqual(min);
      expect(p95).toBeLessThanOrEqual(max);
      expect(entry.peakPerSecond).toBeGreaterThanOrEqual(1);
      expect(entry.peakPerSecond).toBeLessThanOrEqual(entry.count);
    }
    expect(body.total.peakPerSecond).toBeGreaterThanOrEqual(
      Math.max(...body.versions.map((entry: { peakPerSecond: number }) => entry.peakPerSecond)),
    );
    expect(body.total.latencyMs.min).toBe(Math.min(body.versions[0].latencyMs.min, body.versions[1].latencyMs.min));
    expect(body.total.latencyMs.max).toBe(Math.max(body.versions[0].latencyMs.max, body.versions[1].latencyMs.max));
  });

  it('echoes the window in whole seconds and answers zeros outside the traffic', async () => {
    const response = await statistics(scenarioId, { from: '2026-01-01T00:00:00.400Z', to: '2026-01-01T00:10:00.200Z' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-01T00:10:01.000Z',
      versions: [],
    });
    expect(response.body.total).toEqual({
      count: 0,
      errors: 0,
      peakPerSecond: 0,
      byMode: { sync: 0, async: 0, batch: 0 },
      latencyMs: null,
    });
  });

  it('covers the hour before now by default', async () => {
    const response = await statistics(scenarioId);
    expect(response.status).toBe(200);
    expect(Date.parse(response.body.to) - Date.parse(response.body.from)).toBeGreaterThanOrEqual(3600_000);
    expect(Date.parse(response.body.to) - Date.parse(response.body.from)).toBeLessThanOrEqual(3601_000);
    expect(response.body.total.count).toBe(12);
  });

  it("lets an admin read another user's scenario", async () => {
    const response = await statistics(scenarioId, window, root);
    expect(response.status).toBe(200);
    expect(response.body.total.count).toBe(12);
  });
});

describe('getScenarioStatistics refuses', () => {
  it('401 without a valid bearer token', async () => {
    expect((await request(t.app).get(`/api/scenario/${scenarioId}/statistics`)).status).toBe(401);
    const wrong = await request(t.app)
      .get(`/api/scenario/${scenarioId}/statistics`)
      .set('Authorization', 'Bearer not-a-jwt');
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('UNAUTHENTICATED');
  });

  it("403 FORBIDDEN for another user's scenario, and 403 CONTEXT_MISMATCH for a requester other than the token's user", async () => {
    const foreign = await statistics(scenarioId, {}, bob);
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('FORBIDDEN');
    const impostor = await request(t.app)
      .get(`/api/scenario/${scenarioId}/statistics`)
      .query({ context: contextFor(alice.username) })
      .set('Authorization', `Bearer ${bob.accessToken}`);
    expect(impostor.status).toBe(403);
    expect(impostor.body.code).toBe('CONTEXT_MISMATCH');
  });

  it('404 SCENARIO_NOT_FOUND for an unknown id or one that is not ours', async () => {
    for (const id of ['4000000000', 'abc']) {
      const response = await statistics(id);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('SCENARIO_NOT_FOUND');
    }
  });

  it('400 naming the parameter for a window that is empty, longer than 31 days, or not made of date-times', async () => {
    const empty = await statistics(scenarioId, { from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' });
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'query.from' }] });
    const long = await statistics(scenarioId, { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:01Z' });
    expect(long.status).toBe(400);
    expect(long.body.message).toContain('31 days');
    const malformed = await statistics(scenarioId, { from: 'yesterday' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.details[0].path).toBe('query.from');
    // Shaped like a date-time but impossible (an hour 25, 30 February): 400, never a 500.
    for (const impossible of [
      { from: '2026-11-23T25:00:00Z' },
      { to: '2026-02-30T00:00:00Z' },
      { to: '0000-01-01T00:00:00Z' },
      { from: '9999-12-31T00:00:00Z', to: '9999-12-31T23:59:59-23:59' },
    ] as Array<Record<string, string>>) {
      const response = await statistics(scenarioId, impossible);
      expect(response.status).toBe(400);
      expect(response.body.details[0].path).toBe(`query.${Object.keys(impossible).at(-1)}`);
    }
  });

  it('400 naming query.to for a window that ends in the last second of 9999 (its whole-second end would be year 10000)', async () => {
    const response = await statistics(scenarioId, { from: '9999-12-01T00:00:00Z', to: '9999-12-31T23:59:59.999Z' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'query.to' }] });
    expect(response.body.message).toContain('query.to');
    // The last whole second itself is a window's end like any other.
    const last = await statistics(scenarioId, { from: '9999-12-01T00:00:00Z', to: '9999-12-31T23:59:59Z' });
    expect(last.status).toBe(200);
    expect(last.body.to).toBe('9999-12-31T23:59:59.000Z');
  });
});
