import { describe, expect, it } from '@jest/globals';
import type { FinishedRun } from '../../src/execution/run-listener.js';
import { OTHER_SCENARIOS, RunCounters } from '../../src/metrics/run-counters.js';
import type { DeployedScenario } from '../../src/scenarios/deployed-scenarios.js';

const version = (ownerName: string, name: string, label: string): DeployedScenario => ({
  scenarioId: 1,
  ownerId: 1,
  ownerName,
  name,
  versionId: 1,
  version: label,
  cacheKey: `version:${label}`,
  document: { content: '{}', nodeProperties: {} },
});
const run = (
  scenario: DeployedScenario,
  errorCode: string | null = null,
  mode: FinishedRun['mode'] = 'sync',
): FinishedRun => ({ scenario, mode, errorCode, durationMs: 1 });

describe('RunCounters', () => {
  it('counts by owner, scenario, version, mode and outcome, one series however many objects stand for a version', () => {
    const counters = new RunCounters(10);
    // The resolver hands out a new object for the same version after its cache expires.
    const first = version('alice', 'credit', '3');
    const again = version('alice', 'credit', '3');
    counters.count(run(first));
    counters.count(run(again));
    counters.count(run(first, 'INVALID_INPUT'));
    counters.count(run(first, 'SCRIPT_ERROR', 'batch'));
    expect([...counters.values()]).toEqual([
      { labels: { owner: 'alice', scenario: 'credit', version: '3', mode: 'sync', outcome: 'succeeded' }, value: 2 },
      {
        labels: { owner: 'alice', scenario: 'credit', version: '3', mode: 'sync', outcome: 'invalid_input' },
        value: 1,
      },
      { labels: { owner: 'alice', scenario: 'credit', version: '3', mode: 'batch', outcome: 'failed' }, value: 1 },
    ]);
  });

  it('counts the versions past its cap under `_other`, so deploying without end cannot grow the scrape', () => {
    const counters = new RunCounters(2);
    for (let label = 1; label <= 5; label += 1) counters.count(run(version('bob', 'spam', String(label))));
    const values = [...counters.values()];
    expect(values.map((value) => value.labels.version)).toEqual(['1', '2', OTHER_SCENARIOS]);
    expect(values[2]).toEqual({
      labels: {
        owner: OTHER_SCENARIOS,
        scenario: OTHER_SCENARIOS,
        version: OTHER_SCENARIOS,
        mode: 'sync',
        outcome: 'succeeded',
      },
      value: 3,
    });
  });

  it('shares the cap fairly among owners: a later owner takes series from the one holding the most, not `_other` for ever', () => {
    const counters = new RunCounters(4);
    const bobs = [1, 2, 3, 4, 5].map((label) => version('bob', 'spam', String(label)));
    for (const bob of bobs) counters.count(run(bob));
    // bob came first and holds all four series; version 5 is under _other.
    const alice = version('alice', 'credit', '1');
    counters.count(run(alice));
    counters.count(run(version('carol', 'loan', '1')));
    counters.count(run(version('alice', 'credit', '2')));
    const owners = (values: ReturnType<typeof counters.values>) =>
      [...values].map((value) => `${value.labels.owner}/${value.labels.version}`);
    // bob gave up his two oldest series to alice and carol; alice's second version finds no owner holding two more than her.
    expect(owners(counters.values()).sort()).toEqual(['_other/_other', 'alice/1', 'bob/3', 'bob/4', 'carol/1'].sort());
    // bob's given-up version runs again: he holds the most, so it takes nothing back (no churn).
    counters.count(run(bobs[0]));
    expect(owners(counters.values())).not.toContain('bob/1');
    // A fourth owner takes bob's oldest remaining series: every owner holds one now.
    counters.count(run(version('dave', 'risk', '1')));
    expect(owners(counters.values()).sort()).toEqual(['_other/_other', 'alice/1', 'bob/4', 'carol/1', 'dave/1'].sort());
    // Runs of alice's first version, through the same object, still count in her series.
    counters.count(run(alice));
    expect(
      [...counters.values()].find((value) => value.labels.owner === 'alice' && value.labels.version === '1')?.value,
    ).toBe(2);
  });
});
