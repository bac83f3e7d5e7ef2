import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { freePort } from '../support/private-redis.js';
import {
  exitWithin,
  httpRequest,
  startServiceProcess,
  stopAll,
  waitUntilListening,
  type ServiceProcess,
} from '../support/service-process.js';
import { scenarioIdOf } from './support.js';
import { storedRecordCount } from './stored-records.js';

/** An API process stores the records it still holds when it is stopped with SIGTERM. */

let t: TestApp;
let alice: TestUser;
let scenarioId: string;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  scenarioId = await scenarioIdOf(t, alice.id, 'double');
}, 30_000);
afterAll(async () => {
  await stopAll(processes);
  await t.close();
});

const recorded = () => storedRecordCount(t.services.db, scenarioId);

describe('SIGTERM', () => {
  it('stores the buffered records before the process exits', async () => {
    const port = await freePort();
    // Under load records wait up to a minute for their insert: only the shutdown can store them in time.
    const api = startServiceProcess('src/main.ts', {
      PORT: String(port),
      RUN_WORKER: 'false',
      RECORDS_FLUSH_MS: '60000',
      JOBS_KEY_PREFIX: `scoring:test:records-stop:${randomUUID().slice(0, 8)}:`,
    });
    processes.push(api);
    await waitUntilListening(api, port);
    const score = (a: number) =>
      httpRequest(port, 'POST', '/api/scenario/code/remote/score?name=double', {
        headers: { 'Score-Token': alice.scoreToken },
        body: { a },
      });
    for (let k = 0; k < 21; k += 1) expect((await score(100 + k)).status).toBe(200);
    // The first record went out at once (an idle recorder does not wait); the others wait for the interval.
    expect(await recorded()).toBeLessThan(21);
    api.child.kill('SIGTERM');
    expect(await exitWithin(api, 20_000)).toBe(0);
    expect(await recorded()).toBe(21);
  }, 60_000);
});
