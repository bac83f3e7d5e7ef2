import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import knex, { type Knex } from 'knex';
import request from 'supertest';
import { knexConfig } from '../../src/db/database.js';
import type { FinishedRun, RunMode } from '../../src/execution/run-listener.js';
import { createLogger } from '../../src/logger.js';
import type { DeployedScenario } from '../../src/scenarios/deployed-scenarios.js';
import { RunStatisticsRecorder, type RecorderSettings } from '../../src/statistics/run-statistics-recorder.js';
import { StatisticsStore } from '../../src/statistics/statistics-store.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * The recorder with a pinned clock, on the real database: exact counts, peaks and latencies; several
 * processes adding up; counts kept while MySQL refuses the writes; the buffer's cap; pruning.
 */
const logger = createLogger('silent');
let t: TestApp;
let alice: TestUser;
let scenario: DeployedScenario;
/** Whole minutes, three days ago: within the retention, away from any other test's traffic. */
const BASE = Math.floor((Date.now() - 3 * 86_400_000) / 60_000) * 60;

beforeAll(async () => {
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'pinned', doublingScenario());
  scenario = await t.services.deployedScenarios.require(alice.id, 'pinned');
});
afterAll(async () => {
  await t.close();
});

/** A recorder on its own clock: `clock.at(second)` moves it. */
function recorder(
  options: Partial<RecorderSettings> & { store?: StatisticsStore; onDropped?: (runs: number) => void } = {},
) {
  const clock = {
    ms: BASE * 1000,
    at(second: number) {
      this.ms = second * 1000 + 500;
    },
  };
  const instance = new RunStatisticsRecorder(
    options.store ?? t.services.statistics.store,
    { flushMs: 60_000, retentionDays: 30, now: () => clock.ms, ...options },
    logger,
    options.onDropped,
  );
  return { recorder: instance, clock };
}
const run = (durationMs: number, mode: RunMode = 'sync', errorCode: string | null = null): FinishedRun => ({
  scenario,
  mode,
  errorCode,
  durationMs,
});
const statistics = (fromSecond: number, toSecond: number) =>
  request(t.app)
    .get(`/api/scenario/${scenario.scenarioId}/statistics`)
    .query({
      context: alice.context(),
      from: new Date(fromSecond * 1000).toISOString(),
      to: new Date(toSecond * 1000).toISOString(),
    })
    .set('Authorization', `Bearer ${alice.accessToken}`);

describe('RunStatisticsRecorder', () => {
  it('writes exact counts, errors, peak and min/avg/max, and a p95 within 9 %, added up across processes', async () => {
    const S = BASE;
    const a = recorder();
    const b = recorder();
    // Process A, second S: 18 runs of 1 ms (one failed), one of 5 ms; second S+1: 4 runs of 2 ms in a batch.
    a.clock.at(S);
    for (let i = 0; i < 18; i += 1) a.recorder.runFinished(run(1, 'sync', i === 0 ? 'SCRIPT_ERROR' : null));
    a.recorder.runFinished(run(5));
    a.clock.at(S + 1);
    for (let i = 0; i < 4; i += 1) a.recorder.runFinished(run(2, 'batch'));
    // Process B, second S: one run of 50 ms, async.
    b.clock.at(S);
    b.recorder.runFinished(run(50, 'async', 'TIME_LIMIT_EXCEEDED'));
    await Promise.all([a.recorder.flush(), b.recorder.flush()]);

    const both = await statistics(S, S + 2);
    expect(both.status).toBe(200);
    expect(both.body.total).toMatchObject({
      count: 24,
      errors: 2,
      peakPerSecond: 20,
      byMode: { sync: 19, async: 1, batch: 4 },
    });
    expect(both.body.versions).toEqual([{ version: '1', ...both.body.total }]);
    const { min, avg, max, p95 } = both.body.total.latencyMs;
    expect([min, max]).toEqual([1, 50]);
    expect(avg).toBeCloseTo((18 * 1 + 5 + 4 * 2 + 50) / 24, 3);
    // Rank 23 of 24 is the 5 ms run.
    expect(p95).toBeGreaterThanOrEqual(5 * 0.91);
    expect(p95).toBeLessThanOrEqual(5 * 1.09);

    const second = await statistics(S + 1, S + 2);
    expect(second.body.total).toMatchObject({
      count: 4,
      errors: 0,
      peakPerSecond: 4,
      byMode: { sync: 0, async: 0, batch: 4 },
    });
    expect(second.body.total.latencyMs).toMatchObject({ min: 2, avg: 2, max: 2 });
    const first = await statistics(S, S + 1);
    expect(first.body.total).toMatchObject({ count: 20, peakPerSecond: 20 });
  });

  it('adds what a later flush counted to the same second', async () => {
    const S = BASE + 120;
    const { recorder: r, clock } = recorder();
    clock.at(S);
    r.runFinished(run(1));
    await r.flush();
    r.runFinished(run(3));
    await r.flush();
    const response = await statistics(S, S + 1);
    expect(response.body.total).toMatchObject({ count: 2, peakPerSecond: 2, latencyMs: { min: 1, avg: 2, max: 3 } });
  });

  it('keeps its counts while MySQL refuses the write, and writes them once (not twice) when it is back', async () => {
    const S = BASE + 240;
    const target = new URL(t.config.databaseUrl);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 3306));
    await proxy.start();
    const db: Knex = knex({
      ...knexConfig(proxy.rewrite(t.config.databaseUrl), { min: 0, max: 2 }, true),
      acquireConnectionTimeout: 1000,
    });
    try {
      const { recorder: r, clock } = recorder({ store: new StatisticsStore(db) });
      clock.at(S);
      r.runFinished(run(1));
      r.runFinished(run(2));
      await proxy.cut();
      await r.flush();
      expect((await statistics(S, S + 1)).body.total.count).toBe(0);
      r.runFinished(run(3));
      await proxy.restore();
      await r.flush();
      const response = await statistics(S, S + 1);
      expect(response.body.total).toMatchObject({ count: 3, latencyMs: { min: 1, avg: 2, max: 3 } });
    } finally {
      await db.destroy();
      await proxy.close();
    }
  });

  it('drops the runs past its buffer cap and reports how many', async () => {
    const S = BASE + 360;
    let dropped = 0;
    // A run in a new second takes two cells (its second and its latency bucket).
    const { recorder: r, clock } = recorder({
      maxBufferedCells: 2,
      onDropped: (runs) => {
        dropped += runs;
      },
    });
    clock.at(S);
    r.runFinished(run(1));
    clock.at(S + 1);
    r.runFinished(run(1));
    r.runFinished(run(1));
    expect(dropped).toBe(2);
    await r.flush();
    r.runFinished(run(1));
    await r.flush();
    expect(dropped).toBe(2);
    expect((await statistics(S, S + 2)).body.total.count).toBe(2);
  });

  it('prunes the rows older than the retention', async () => {
    const old = Math.floor(Date.now() / 1000) - 40 * 86_400;
    const { recorder: past, clock } = recorder();
    clock.at(old);
    past.runFinished(run(1));
    await past.flush();
    expect((await statistics(old, old + 1)).body.total.count).toBe(1);
    const { recorder: now } = recorder({ now: Date.now, retentionDays: 30 });
    await now.prune();
    expect((await statistics(old, old + 1)).body.total.count).toBe(0);
    expect((await statistics(BASE, BASE + 2)).body.total.count).toBe(24);
  });
});
