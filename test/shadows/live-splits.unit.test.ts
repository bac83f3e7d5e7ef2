import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../../src/logger.js';
import { LiveSplits } from '../../src/shadows/live-splits.js';
import type { LiveSplit, SplitRun } from '../../src/shadows/split.js';
import type { MySqlSplitStore } from '../../src/shadows/split-store.js';
import { championOf } from './live-fixtures.js';

const logger = createLogger('silent');
const champion = championOf({ content: 'champion' });

function liveSplits(split: Partial<LiveSplit> | null, random = () => 0) {
  const running: LiveSplit | null = split && {
    id: 'split-1',
    ownerId: 1,
    championVersion: '1',
    championVersionId: 70,
    stickyBy: 'customerId',
    decisionOutput: 'decision',
    challengers: [
      {
        version: 'develop',
        versionId: 71,
        contentHash: 'abc',
        percent: 50,
        document: { content: 'challenger' } as never,
      },
    ],
    ...split,
  };
  const runs: SplitRun[] = [];
  const counted: string[] = [];
  const live = new LiveSplits(
    { running: async () => running } as unknown as MySqlSplitStore,
    { add: (run) => runs.push(run) },
    { splitRunFinished: (arm, outcome) => counted.push(`${arm}:${outcome}`) },
    logger,
    { freshMs: 60_000, maxStaleMs: 0, random },
  );
  return { live, runs, counted };
}

describe('the live path of splits', () => {
  it('answers no arm until the scenario\u2019s split is cached, and none beside another champion', async () => {
    const { live } = liveSplits({});
    expect(live.assign(champion, { customerId: 'c' })).toBeUndefined();
    await live.reload(champion.scenarioId);
    expect(live.assign({ ...champion, versionId: 99 }, { customerId: 'c' })).toBeUndefined();
    expect(live.assign(champion, { customerId: 'c' })).toBeDefined();
  });

  it('runs a challenger in the champion\u2019s place: its version, document and content-keyed cache key', async () => {
    const { live, runs, counted } = liveSplits({
      stickyBy: null,
      challengers: [
        {
          version: 'develop',
          versionId: 71,
          contentHash: 'abc',
          percent: 100,
          document: { content: 'challenger' } as never,
        },
      ],
    });
    await live.reload(champion.scenarioId);
    const arm = live.assign(champion, {});
    expect(arm?.deployed).toMatchObject({
      scenarioId: 7,
      versionId: 71,
      version: 'develop',
      document: { content: 'challenger' },
    });
    expect(arm?.deployed.cacheKey).not.toBe('version:70');
    arm?.finished({ decision: 7 }, false, 1.5);
    arm?.finished(null, true, 2);
    expect(runs).toEqual([
      { splitId: 'split-1', arm: 'develop', failed: false, decision: '7', durationMicros: 1500 },
      { splitId: 'split-1', arm: 'develop', failed: true, decision: null, durationMicros: 2000 },
    ]);
    expect(counted).toEqual(['challenger:succeeded', 'challenger:failed']);
  });

  it('sends a sticky split\u2019s run without the input to the champion, and a customer to one arm every time', async () => {
    const { live, runs } = liveSplits({});
    await live.reload(champion.scenarioId);
    for (const inputs of [{}, { customerId: null }]) {
      const arm = live.assign(champion, inputs);
      expect(arm?.deployed).toBe(champion);
      arm?.finished({ decision: 'APPROVE' }, false, 1);
    }
    expect(runs.map((run) => [run.arm, run.decision])).toEqual([
      ['1', 'APPROVE'],
      ['1', 'APPROVE'],
    ]);
    for (let n = 0; n < 50; n += 1) {
      const first = live.assign(champion, { customerId: `C-${n}` })?.deployed.version;
      for (let k = 0; k < 5; k += 1)
        expect(live.assign(champion, { customerId: `C-${n}` })?.deployed.version).toBe(first);
    }
  });
});
