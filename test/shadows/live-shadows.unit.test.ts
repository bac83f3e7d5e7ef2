import { describe, expect, it, jest } from '@jest/globals';
import type { ScenarioEngine } from '../../src/engine/index.js';
import { createLogger } from '../../src/logger.js';
import type { DeployedScenario } from '../../src/scenarios/deployed-scenarios.js';
import { LiveShadows, type ShadowMetrics } from '../../src/shadows/live-shadows.js';
import { ShadowBudget } from '../../src/shadows/shadow-budget.js';
import { ShadowRunWriter } from '../../src/shadows/shadow-run-writer.js';
import type { LiveShadow, ShadowRun } from '../../src/shadows/shadow.js';
import type { MySqlShadowStore } from '../../src/shadows/shadow-store.js';

const logger = createLogger('silent');
const deployed = {
  scenarioId: 7,
  versionId: 70,
  ownerId: 1,
  ownerName: 'alice',
  name: 's',
  version: '1',
  cacheKey: 'version:70',
  document: {},
} as unknown as DeployedScenario;
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
    const writer = new ShadowRunWriter(store, { flushMs: 10_000, maxBuffered: 10, onDropped: () => undefined }, logger);
    const budget = new ShadowBudget({ share: 0, engineHosts: 4, maxInFlight: 10 });
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
    const writer = new ShadowRunWriter(store, { flushMs: 10_000, maxBuffered: 10, onDropped: () => undefined }, logger);
    const live = new LiveShadows(
      store,
      {} as ScenarioEngine,
      new ShadowBudget({ share: 1, engineHosts: 4, maxInFlight: 10 }),
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

describe('the shadow run writer', () => {
  const aRun = (runId: string): ShadowRun => ({
    shadowId: 'sh-1',
    runId,
    requestId: runId,
    beganAt: new Date(),
    champion: { result: { out: 1 }, error: null },
    shadow: { result: { out: 2 }, error: null },
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
