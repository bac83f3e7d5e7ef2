import { describe, expect, it, jest } from '@jest/globals';
import type { ScenarioEngine } from '../../src/engine/index.js';
import { createLogger } from '../../src/logger.js';
import { LiveShadows, type ShadowMetrics } from '../../src/shadows/live-shadows.js';
import { ShadowBudget } from '../../src/shadows/shadow-budget.js';
import { ShadowRunWriter } from '../../src/shadows/shadow-run-writer.js';
import type { LiveShadow, ShadowRun } from '../../src/shadows/shadow.js';
import type { MySqlShadowStore } from '../../src/shadows/shadow-store.js';
import { championOf } from './live-fixtures.js';

const logger = createLogger('silent');
const deployed = championOf({});
const shadow = {
  id: 'sh-1',
  ownerId: 1,
  championVersionId: 70,
  sampleRate: 1,
  contentHash: 'h',
  document: {},
  outputs: ['out'],
} as unknown as LiveShadow;

function fakeStore(
  overrides: Partial<Record<'running' | 'insertRuns' | 'addSkipped', (...args: never[]) => Promise<unknown>>> = {},
) {
  const inserted: ShadowRun[] = [];
  const skipped: Array<Map<string, number>> = [];
  const store = {
    running: async () => [shadow],
    insertRuns: async (runs: ShadowRun[]) => {
      inserted.push(...runs);
    },
    addSkipped: async (counts: Map<string, number>) => {
      skipped.push(new Map(counts));
    },
    ...overrides,
  } as unknown as MySqlShadowStore;
  return { store, inserted, skipped };
}

function metrics(): ShadowMetrics & { skips: string[] } {
  const skips: string[] = [];
  return {
    skips,
    shadowRunFinished: () => undefined,
    shadowRunSkipped: (reason) => {
      skips.push(reason);
    },
  };
}

describe('the live path of shadows', () => {
  it('with the budget spent, skips and counts at sampling: the champion runs without hooks or follow-up', async () => {
    const { store } = fakeStore();
    const counted = metrics();
    const writer = new ShadowRunWriter(
      store,
      { flushMs: 10_000, maxBuffered: 10, onDropped: () => undefined, onWriteMs: () => undefined },
      logger,
    );
    const budget = new ShadowBudget({ share: 0, maxInFlight: 10, engineMs: () => 0 });
    const run = jest.fn();
    const live = new LiveShadows(store, { run } as unknown as ScenarioEngine, budget, writer, counted, logger, {
      freshMs: 60_000,
      maxStaleMs: 0,
      runTimeoutMs: 1000,
    });
    await live.reload(deployed.scenarioId);
    expect(live.sample(deployed)).toBeUndefined();
    expect(counted.skips).toEqual(['budget']);
    expect(run).not.toHaveBeenCalled();
  });

  it('samples the shadows of the champion they were attached to only', async () => {
    const { store } = fakeStore();
    const writer = new ShadowRunWriter(
      store,
      { flushMs: 10_000, maxBuffered: 10, onDropped: () => undefined, onWriteMs: () => undefined },
      logger,
    );
    const live = new LiveShadows(
      store,
      {} as ScenarioEngine,
      new ShadowBudget({ share: 1, maxInFlight: 10, engineMs: () => 0 }),
      writer,
      metrics(),
      logger,
      { freshMs: 60_000, maxStaleMs: 0, runTimeoutMs: 1000 },
    );
    expect(live.sample(deployed)).toBeUndefined(); // not cached yet: read in the background, this run unshadowed
    await live.reload(deployed.scenarioId);
    expect(live.sample(deployed)).toBeDefined();
    expect(live.sample({ ...deployed, versionId: 71 })).toBeUndefined();
  });
});

describe('the live path of shadows, what the budget is charged', () => {
  const champion = {
    runId: 'run-1',
    requestId: 'req-1',
    ownerId: 1,
    inputs: { a: 1 },
    beganAt: new Date(),
    result: { out: 1 },
    error: null,
    maskError: (error: never) => error,
  };

  it('charges the API process’s own time for a shadow run, not only its sandbox time', async () => {
    const { store, inserted } = fakeStore({
      insertRuns: async (...args: never[]) => {
        const [runs, onBuilt] = args as unknown as [ShadowRun[], (ms: number) => void];
        inserted.push(...runs);
        onBuilt(0.5);
      },
    });
    // A frozen clock and no engine time spent: the bucket holds only what it started with (100 ms).
    const budget = new ShadowBudget({ share: 1, maxInFlight: 10, engineMs: () => 0, now: () => 0 });
    const charged: number[] = [];
    const finished: number[] = [];
    const charge = budget.charge.bind(budget);
    const finish = budget.finish.bind(budget);
    budget.charge = (ms) => {
      charged.push(ms);
      charge(ms);
    };
    budget.finish = (id, ms) => {
      finished.push(ms);
      finish(id, ms);
    };
    const writer = new ShadowRunWriter(
      store,
      { flushMs: 10_000, maxBuffered: 10, onDropped: () => undefined, onWriteMs: (ms) => budget.charge(ms) },
      logger,
    );
    // The engine measures no sandbox time at all for the shadow's run.
    const run = jest.fn(async () => ({ result: { out: 2 } }));
    const engine = { run, compile: () => ({}) } as unknown as ScenarioEngine;
    const counted = metrics();
    const live = new LiveShadows(store, engine, budget, writer, counted, logger, {
      freshMs: 60_000,
      maxStaleMs: 0,
      runTimeoutMs: 1000,
    });
    await live.reload(deployed.scenarioId);
    const sampled = live.sample(deployed);
    expect(sampled).toBeDefined();
    // The sampling itself is charged.
    expect(charged).toHaveLength(1);
    sampled?.championFinished(champion);
    // Started on a later turn, never in the champion's.
    expect(run).not.toHaveBeenCalled();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(run).toHaveBeenCalledTimes(1);
    // The hand-over turn is charged, and the run's ending though the engine measured no sandbox time.
    expect(charged).toHaveLength(2);
    expect(finished).toHaveLength(1);
    expect(finished[0]).toBeGreaterThan(0);
    await writer.flush();
    expect(inserted.map((row) => JSON.parse(row.shadow))).toEqual([{ result: { out: 2 }, error: null }]);
    // And the building of the statement that writes its row.
    expect(charged.slice(2)).toEqual([0.5]);
    // What was charged is gone from the bucket: with all of it charged again, the next run is skipped.
    budget.charge(100);
    expect(live.sample(deployed)).toBeUndefined();
    expect(counted.skips).toEqual(['budget']);
  });
});

describe('the shadow run writer', () => {
  const aRun = (runId: string): ShadowRun => ({
    shadowId: 'sh-1',
    runId,
    requestId: runId,
    beganAt: new Date(),
    champion: JSON.stringify({ result: { out: 1 }, error: null }),
    shadow: JSON.stringify({ result: { out: 2 }, error: null }),
    calls: { unrecorded: [], served: 0, requestDiffers: 0 },
    durationMicros: 1,
  });

  it('writes runs and skip counts in bulk, keeps what a failed write held, and takes nothing once closed', async () => {
    let fail = true;
    const { store, inserted, skipped } = fakeStore({
      insertRuns: async (...args: never[]) => {
        if (fail) throw new Error('MySQL is down');
        inserted.push(...(args[0] as unknown as ShadowRun[]));
      },
    });
    const dropped: number[] = [];
    const writer = new ShadowRunWriter(
      store,
      {
        flushMs: 10_000,
        maxBuffered: 2,
        onDropped: (count) => {
          dropped.push(count);
        },
        onWriteMs: () => undefined,
      },
      logger,
    );
    writer.add(aRun('a'));
    writer.skip('sh-1');
    await writer.flush();
    expect(inserted).toEqual([]);
    expect(skipped).toEqual([new Map([['sh-1', 1]])]);
    writer.add(aRun('b'));
    writer.add(aRun('c'));
    expect(dropped).toEqual([1]);
    fail = false;
    await writer.flush();
    expect(inserted.map((run) => run.runId)).toEqual(['a', 'b']);
    await writer.close();
    writer.add(aRun('d'));
    writer.skip('sh-1');
    await writer.flush();
    expect(inserted.map((run) => run.runId)).toEqual(['a', 'b']);
    expect(skipped).toHaveLength(1);
  });
});
