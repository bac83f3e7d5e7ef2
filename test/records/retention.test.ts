import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';
import { RecordingSettingsStore } from '../../src/records/recording-settings-store.js';
import { RetentionSweeper } from '../../src/records/retention-sweeper.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { aRecord } from './record-fixture.js';
import { putSettings, scenarioIdOf } from './support.js';

/** Expired records are deleted in the background, per scenario retention, in bounded batches. */

let t: TestApp;
let alice: TestUser;
const DAY = 86_400_000;
const NOW = new Date();
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);

/** The real store, counting the DELETE statements it runs. */
class CountingStore extends MySqlDecisionRecordStore {
  readonly deletes: number[] = [];
  override async deleteBegunBefore(scenarioId: number, cutoff: Date, limit: number): Promise<number> {
    const deleted = await super.deleteBegunBefore(scenarioId, cutoff, limit);
    this.deletes.push(scenarioId, deleted);
    return deleted;
  }

  /** How many records each DELETE for the scenario removed, in order. */
  deletedPerStatement(scenarioId: number): number[] {
    const counts: number[] = [];
    for (let k = 0; k < this.deletes.length; k += 2)
      if (this.deletes[k] === scenarioId) counts.push(this.deletes[k + 1]);
    return counts;
  }
}

let store: CountingStore;
const sweeper = (batchSize = 5000) =>
  new RetentionSweeper(
    store,
    new RecordingSettingsStore(t.services.db),
    { everyMs: 60_000, batchSize, pauseMs: 1 },
    t.services.logger,
  );

beforeAll(async () => {
  t = await createTestApp();
  alice = await t.newUser();
  store = new CountingStore(t.services.db);
});
afterAll(() => t.close());

async function scenarioWithRecords(name: string, ages: number[]): Promise<number> {
  await deployScenario(t.services.db, alice.id, name, doublingScenario());
  const scenarioId = Number(await scenarioIdOf(t, alice.id, name));
  // A page each, as a scenario that records a run now and then stores them.
  for (const days of ages)
    await store.insertMany([
      aRecord(scenarioId, {
        ownerId: alice.id,
        requesterId: alice.id,
        scenarioName: name,
        requestId: `${days}d`,
        beganAt: daysAgo(days),
      }),
    ]);
  return scenarioId;
}

const left = async (scenarioId: number) =>
  (await store.list(scenarioId, {}, undefined, 100)).records.map((r) => r.requestId);

describe('RetentionSweeper', () => {
  it('keeps records for 30 days by default, and for what a scenario set otherwise (its records already kept included)', async () => {
    const byDefault = await scenarioWithRecords('kept-30', [40, 31, 29, 1]);
    const weekly = await scenarioWithRecords('kept-7', [40, 8, 6, 1]);
    await putSettings(t, alice, String(weekly), {
      enabled: true,
      retentionDays: 7,
      syncSampleRate: 1,
      trace: false,
    }).expect(200);
    const deleted = await sweeper().sweepOnce(NOW);
    expect(deleted).toBeGreaterThanOrEqual(4);
    expect(await left(byDefault)).toEqual(['1d', '29d']);
    expect(await left(weekly)).toEqual(['1d', '6d']);
    await putSettings(t, alice, String(weekly), {
      enabled: true,
      retentionDays: 2,
      syncSampleRate: 1,
      trace: false,
    }).expect(200);
    await sweeper().sweepOnce(NOW);
    expect(await left(weekly)).toEqual(['1d']);
  });

  it('deletes in statements of at most `batchSize` records until none is left', async () => {
    const scenarioId = await scenarioWithRecords('many-expired', [50, 49, 48, 47, 46, 45, 44, 3]);
    await sweeper(2).sweepOnce(NOW);
    expect(await left(scenarioId)).toEqual(['3d']);
    expect(store.deletedPerStatement(scenarioId)).toEqual([2, 2, 2, 1]);
  });

  it('keeps a page until its newest record expired', async () => {
    await deployScenario(t.services.db, alice.id, 'one-page', doublingScenario());
    const scenarioId = Number(await scenarioIdOf(t, alice.id, 'one-page'));
    await store.insertMany(
      [40, 20].map((days) =>
        aRecord(scenarioId, {
          ownerId: alice.id,
          requesterId: alice.id,
          scenarioName: 'one-page',
          requestId: `${days}d`,
          beganAt: daysAgo(days),
        }),
      ),
    );
    await sweeper().sweepOnce(NOW);
    expect(await left(scenarioId)).toEqual(['20d', '40d']);
    await putSettings(t, alice, String(scenarioId), {
      enabled: true,
      retentionDays: 10,
      syncSampleRate: 1,
      trace: false,
    }).expect(200);
    await sweeper().sweepOnce(NOW);
    expect(await left(scenarioId)).toEqual([]);
  });

  it('runs on a timer once started, and stops', async () => {
    const scenarioId = await scenarioWithRecords('timed', [400]);
    const timed = new RetentionSweeper(
      store,
      new RecordingSettingsStore(t.services.db),
      { everyMs: 50 },
      t.services.logger,
    );
    timed.start();
    try {
      const deadline = Date.now() + 20_000;
      while ((await left(scenarioId)).length > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      timed.stop();
    }
    expect(await left(scenarioId)).toEqual([]);
  });
});
