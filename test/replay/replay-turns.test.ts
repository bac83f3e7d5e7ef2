import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { chain, input, script } from '../engine/support/scenario-builder.js';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { getReplay, putDevelop, scenarioIdOf, startReplay } from './support.js';

/**
 * Issue 27, problem 3: replays ran one at a time per worker, in start order, so one owner's two long
 * replays kept every other owner's waiting. An owner's replays now run one at a time, and other owners'
 * go in between (REPLAY_PER_WORKER replays of different owners at once per worker).
 */
let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let slow: string;
let quick: string;

async function recorded(user: TestUser, name: string, count: number): Promise<string> {
  await deployScenario(t.services.db, user.id, name, doublingScenario());
  const id = await scenarioIdOf(t, user.id, name);
  await t.services
    .db('recording_settings')
    .insert({ scenario_id: Number(id), enabled: true, retention_days: 30, sync_sample_rate: 1, trace: false })
    .onConflict('scenario_id')
    .merge();
  for (let a = 20; a < 20 + count; a += 1)
    expect(
      (
        await request(t.app)
          .post('/api/scenario/code/remote/score')
          .query({ name })
          .set('Score-Token', user.scoreToken)
          .send({ a })
      ).status,
    ).toBe(200);
  await t.services.records.recorder.flush();
  return id;
}

beforeAll(async () => {
  isolateJobStore('replay-turns');
  t = await createTestApp();
  await t.services.execution.startWorker();
  alice = await t.newUser();
  bob = await t.newUser();
  slow = await recorded(alice, 'slow', 30);
  quick = await recorded(bob, 'quick', 6);
  // Alice's candidate spins on every record (about 0.1–0.4 s, well inside the run's time limit): each of her replays takes seconds.
  await putDevelop(
    t,
    slow,
    chain(
      [input('a', 'INTEGER')],
      [
        script('spin', 'var s = 0; for (var i = 0; i < 200000000; i++) { s += i; } doubled = s > 0 ? a * 2 : 0;', [
          'doubled',
        ]),
      ],
    ),
  );
}, 60_000);
afterAll(() => t.close());

const state = async (user: TestUser, scenarioId: string, replayId: string) =>
  (await getReplay(t, user, scenarioId, replayId)).body as { state: string };

describe('replays of several owners', () => {
  it('starts another owner’s replay while one owner’s two long replays take their turn, one at a time', async () => {
    const first = (await startReplay(t, alice, slow, { candidateVersion: 'develop', outputs: ['doubled'] })).body
      .replayId as string;
    await waitFor(async () => ((await state(alice, slow, first)).state === 'RUNNING' ? true : undefined), 10_000, 50);
    const second = (await startReplay(t, alice, slow, { candidateVersion: 'develop', outputs: ['doubled'] })).body
      .replayId as string;
    const bobs = (await startReplay(t, bob, quick, { candidateVersion: '1', outputs: ['doubled'] })).body
      .replayId as string;
    // Bob's replay is taken at once, not after both of Alice's (before, a worker ran one replay at a time,
    // in start order); Alice's second waits for her first.
    await waitFor(async () => ((await state(bob, quick, bobs)).state !== 'QUEUED' ? true : undefined), 5_000, 50);
    expect((await state(alice, slow, first)).state).toBe('RUNNING');
    expect((await state(alice, slow, second)).state).toBe('QUEUED');
    // Never two of Alice's at once, and all three finish.
    await waitFor(
      async () => {
        const [a, b, c] = [
          await state(alice, slow, first),
          await state(alice, slow, second),
          await state(bob, quick, bobs),
        ];
        expect(a.state === 'RUNNING' && b.state === 'RUNNING').toBe(false);
        return [a, b, c].every((replay) => replay.state === 'FINISHED') ? true : undefined;
      },
      60_000,
      100,
    );
  }, 90_000);
});
