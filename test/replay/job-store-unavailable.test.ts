import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { scenarioIdOf, startReplay } from './support.js';

/** startReplay when the job store does not answer (nothing listens on port 1): 503, and no replay is left behind. */

let t: TestApp;
let alice: TestUser;
beforeAll(async () => {
  t = await createTestApp({ configOverrides: { jobsUrl: 'redis://127.0.0.1:1/0' } });
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
});
afterAll(() => t.close());

describe('startReplay while the job store is unreachable', () => {
  it('answers 503 JOB_STORE_UNAVAILABLE with Retry-After and stores no replay', async () => {
    const id = await scenarioIdOf(t, alice.id, 'double');
    const response = await startReplay(t, alice, id, { candidateVersion: '1', outputs: ['doubled'] });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({
      code: 'JOB_STORE_UNAVAILABLE',
      message: expect.stringContaining('nothing was stored'),
    });
    expect(response.headers['retry-after']).toBe('5');
    expect(
      await t.services
        .db('replays')
        .where({ scenario_id: Number(id) })
        .count({ n: '*' }),
    ).toEqual([{ n: 0 }]);
  });
});
