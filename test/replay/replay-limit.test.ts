import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isolateJobStore } from '../execution/support.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { scenarioIdOf, startReplay } from './support.js';

/**
 * Issue 27, problem 3: the per-owner replay limit was checked by counting, then inserting: 12 parallel
 * starts were all accepted against a limit of 2. No worker runs here, so started replays stay QUEUED.
 */
let t: TestApp;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  isolateJobStore('replay-limit');
  t = await createTestApp();
  alice = await t.newUser();
  bob = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'other', doublingScenario());
  await deployScenario(t.services.db, bob.id, 'double', doublingScenario());
});
afterAll(() => t.close());

describe('REPLAY_MAX_ACTIVE_PER_OWNER under parallel starts', () => {
  it('accepts exactly the limit of 12 parallel starts of one owner, across its scenarios, and 409s the rest', async () => {
    expect(t.services.config.replay.maxActivePerOwner).toBe(2);
    const ids = [await scenarioIdOf(t, alice.id, 'double'), await scenarioIdOf(t, alice.id, 'other')];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, k) =>
        startReplay(t, alice, ids[k % 2], { candidateVersion: '1', outputs: ['doubled'] }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([202, 202, ...Array.from({ length: 10 }, () => 409)]);
    expect(
      answers.filter((answer) => answer.status === 409).every((answer) => answer.body.code === 'REPLAY_LIMIT_REACHED'),
    ).toBe(true);
    expect(
      await t.services
        .db('replays')
        .where({ owner_id: alice.id })
        .whereIn('state', ['QUEUED', 'RUNNING'])
        .count({ n: '*' }),
    ).toEqual([{ n: 2 }]);
  });

  it('does not hold another owner back', async () => {
    const id = await scenarioIdOf(t, bob.id, 'double');
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => startReplay(t, bob, id, { candidateVersion: '1', outputs: ['doubled'] })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 202, 409, 409]);
  });
});
