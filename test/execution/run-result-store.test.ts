import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MySqlRunResultStore, type NewAsyncRun } from '../../src/execution/run-result-store.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

let t: TestApp;
let store: MySqlRunResultStore;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  store = new MySqlRunResultStore(t.services.db);
  alice = await t.newUser();
});
afterAll(() => t.close());

const newRun = (): NewAsyncRun => ({
  id: randomUUID(),
  userId: alice.id,
  requestId: randomUUID(),
  scenarioName: 'double',
  input: { x: 1 },
  callback: null,
});

const states = async (ids: string[]) =>
  Object.fromEntries(
    (
      (await t.services.db('run_results').whereIn('id', ids).select('id', 'state')) as Array<{
        id: string;
        state: string;
      }>
    ).map((row) => [row.id, row.state]),
  );

describe('RunResultStore', () => {
  it('marks only the QUEUED ones of the runs given RUNNING', async () => {
    const runs = [newRun(), newRun(), newRun()];
    await store.insertAsyncRuns(runs);
    await store.finishRuns([
      {
        run: { ...runs[2], batchId: null, elementIndex: null },
        outcome: {
          state: 'SUCCEEDED',
          result: { y: 2 },
          error: null,
          version: '1',
          beganAt: new Date(),
          endedAt: new Date(),
        },
      },
    ]);
    await store.markRunning(runs.map((run) => run.id));
    expect(await states(runs.map((run) => run.id))).toEqual({
      [runs[0].id]: 'RUNNING',
      [runs[1].id]: 'RUNNING',
      [runs[2].id]: 'SUCCEEDED',
    });
  });

  it('claims runs without waiting for another submission whose insert is not committed yet', async () => {
    // Under load, a claim that read `state = QUEUED` through the state index locked a range of it and
    // deadlocked with the inserts of new runs (500s on async submit). Read by primary key, it never
    // touches another submission's rows.
    const mine = Array.from({ length: 20 }, newRun);
    await store.insertAsyncRuns(mine);
    const other = await t.services.db.transaction();
    try {
      await other('run_results').insert({
        id: randomUUID(),
        user_id: alice.id,
        request_id: randomUUID(),
        scenario_name: 'double',
        state: 'QUEUED',
        input: '{}',
        callback_state: 'NONE',
      });
      const claim = store.markRunning(mine.map((run) => run.id)).then(() => 'claimed');
      const waited = new Promise((resolve) => setTimeout(() => resolve('waited for the other insert'), 3000).unref());
      expect(await Promise.race([claim, waited])).toBe('claimed');
    } finally {
      await other.rollback();
    }
    expect(Object.values(await states(mine.map((run) => run.id)))).toEqual(mine.map(() => 'RUNNING'));
  });
});
