import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { createLogger } from '../../src/logger.js';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';
import { ReplayJob } from '../../src/replay/replay-job.js';
import { MySqlReplayStore } from '../../src/replay/replay-store.js';
import { isolateJobStore } from '../execution/support.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, getReplay, scenarioIdOf, startReplay } from './support.js';
import { UserStore } from '../../src/auth/user-store.js';

/**
 * Issue 27, problem 2: a replay could not be stopped. cancelReplay ends a QUEUED or RUNNING one at once,
 * for its owner and admins. No worker runs in this file: started replays stay QUEUED, and the one
 * RUNNING is run here by hand.
 */
let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;
let scenarioId: string;
const body = { candidateVersion: '1', outputs: ['doubled'] };

const cancel = (user: TestUser, id: string, replayId: string) =>
  request(t.app)
    .post(`/api/scenario/${id}/replays/${encodeURIComponent(replayId)}/cancel`)
    .set(bearer(user));

beforeAll(async () => {
  isolateJobStore('replay-cancel');
  t = await createTestApp();
  alice = await t.newUser();
  bob = await t.newUser();
  admin = await t.newUser({ admin: true });
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  scenarioId = await scenarioIdOf(t, alice.id, 'double');
  await t.services
    .db('recording_settings')
    .insert({ scenario_id: Number(scenarioId), enabled: true, retention_days: 30, sync_sample_rate: 1, trace: false })
    .onConflict('scenario_id')
    .merge();
  for (let a = 20; a < 120; a += 1) {
    const scored = await request(t.app)
      .post('/api/scenario/code/remote/score')
      .query({ name: 'double' })
      .set('Score-Token', alice.scoreToken)
      .send({ a });
    expect(scored.status).toBe(200);
  }
  await t.services.records.recorder.flush();
});
afterEach(() => {
  jest.restoreAllMocks();
});
afterAll(() => t.close());

describe('cancelReplay', () => {
  it('cancels a QUEUED replay at once, says who did, and frees its place in the owner’s limit', async () => {
    const started = [await startReplay(t, alice, scenarioId, body), await startReplay(t, alice, scenarioId, body)];
    expect(started.map((answer) => answer.status)).toEqual([202, 202]);
    expect((await startReplay(t, alice, scenarioId, body)).body.code).toBe('REPLAY_LIMIT_REACHED');
    const cancelled = await cancel(alice, scenarioId, started[0].body.replayId);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      replayId: started[0].body.replayId,
      state: 'CANCELLED',
      error: `Cancelled by ${alice.username}.`,
      report: null,
      finishedAt: expect.any(String),
    });
    expect((await startReplay(t, alice, scenarioId, body)).status).toBe(202);
    // Again: answered as it is.
    expect((await cancel(alice, scenarioId, started[0].body.replayId)).body).toMatchObject({
      state: 'CANCELLED',
      error: `Cancelled by ${alice.username}.`,
    });
    // A job of it that a worker takes later ends at once.
    const job = new ReplayJob(
      new MySqlReplayStore(t.services.db, new UserStore(t.services.db)),
      new MySqlDecisionRecordStore(t.services.db),
      t.services.engine,
      { concurrency: 4, pageSize: 5 },
      createLogger('silent'),
    );
    expect(
      await job.run(
        { replayId: started[0].body.replayId },
        async () => undefined,
        () => false,
      ),
    ).toBe(true);
    expect((await getReplay(t, alice, scenarioId, started[0].body.replayId)).body.state).toBe('CANCELLED');
    // Out of the way of the tests below (the limit is 2).
    await t.services
      .db('replays')
      .where({ owner_id: alice.id })
      .whereIn('state', ['QUEUED', 'RUNNING'])
      .update({ state: 'CANCELLED' });
  });

  it('stops a RUNNING replay at its next page and stores no report', async () => {
    const started = await startReplay(t, alice, scenarioId, body);
    const { replayId } = started.body;
    const store = new MySqlReplayStore(t.services.db, new UserStore(t.services.db));
    const original = MySqlReplayStore.prototype.progress;
    // Cancelled (through the API) once the first page of 5 records has been folded in.
    jest.spyOn(MySqlReplayStore.prototype, 'progress').mockImplementationOnce(async function (
      this: MySqlReplayStore,
      id: string,
      done: number,
      failed: number,
    ) {
      expect((await cancel(alice, scenarioId, replayId)).status).toBe(200);
      return original.call(this, id, done, failed);
    });
    const runs = jest.spyOn(t.services.engine, 'run');
    const job = new ReplayJob(
      store,
      new MySqlDecisionRecordStore(t.services.db),
      t.services.engine,
      { concurrency: 4, pageSize: 5 },
      createLogger('silent'),
    );
    expect(
      await job.run(
        { replayId },
        async () => undefined,
        () => false,
      ),
    ).toBe(true);
    const replay = (await getReplay(t, alice, scenarioId, replayId)).body;
    expect(replay).toMatchObject({ state: 'CANCELLED', report: null, total: 100 });
    // The pages already under way when it was cancelled went on (about 6 of the 20 here, by timing); the
    // records after them were never run.
    expect(runs.mock.calls.length).toBeLessThan(100);
  });

  it('lets an admin cancel another owner’s replay, and answers 403 to another user', async () => {
    const { body: replay } = await startReplay(t, alice, scenarioId, body);
    const refused = await cancel(bob, scenarioId, replay.replayId);
    expect(refused.status).toBe(403);
    expect((await getReplay(t, alice, scenarioId, replay.replayId)).body.state).toBe('QUEUED');
    const cancelled = await cancel(admin, scenarioId, replay.replayId);
    expect(cancelled.body).toMatchObject({ state: 'CANCELLED', error: `Cancelled by ${admin.username}.` });
  });

  it('answers 409 REPLAY_ALREADY_ENDED for a FINISHED or FAILED replay, and changes nothing', async () => {
    for (const state of ['FINISHED', 'FAILED']) {
      const { body: replay } = await startReplay(t, alice, scenarioId, body);
      await t.services.db('replays').where({ id: replay.replayId }).update({ state });
      const answer = await cancel(alice, scenarioId, replay.replayId);
      expect([answer.status, answer.body.code]).toEqual([409, 'REPLAY_ALREADY_ENDED']);
      expect((await getReplay(t, alice, scenarioId, replay.replayId)).body.state).toBe(state);
    }
  });

  it('answers 404 REPLAY_NOT_FOUND for an unknown replay or one of another scenario, 404 for an unknown scenario, 400 for a malformed id and 401 without a token', async () => {
    expect((await cancel(alice, scenarioId, '01935c6e-2b7a-7c3d-9e4f-5a6b7c8d9e0f')).body.code).toBe(
      'REPLAY_NOT_FOUND',
    );
    await deployScenario(t.services.db, alice.id, 'other', doublingScenario());
    const other = await scenarioIdOf(t, alice.id, 'other');
    const { body: replay } = await startReplay(t, alice, scenarioId, body);
    expect((await cancel(alice, other, replay.replayId)).body.code).toBe('REPLAY_NOT_FOUND');
    expect((await cancel(alice, '999999999', replay.replayId)).body.code).toBe('SCENARIO_NOT_FOUND');
    expect((await cancel(alice, scenarioId, 'x'.repeat(37))).status).toBe(400);
    expect((await request(t.app).post(`/api/scenario/${scenarioId}/replays/${replay.replayId}/cancel`)).status).toBe(
      401,
    );
  });
});
