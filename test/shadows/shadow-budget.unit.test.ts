import { describe, expect, it } from '@jest/globals';
import { ShadowBudget } from '../../src/shadows/shadow-budget.js';

describe('the shadow budget', () => {
  it('lets shadow runs take at most their share of engine time, refilled as time passes', () => {
    let now = 0;
    // 4 hosts, 10 %: 0.4 ms of engine time per ms, at most 400 ms held.
    const budget = new ShadowBudget({ share: 0.1, engineHosts: 4, maxInFlight: 100, now: () => now });
    expect(budget.tryStart()).toBeNull();
    budget.finish(500);
    expect(budget.tryStart()).toBe('budget');
    expect(budget.available()).toBe(false);
    now += 200;
    expect(budget.tryStart()).toBe('budget');
    now += 100;
    expect(budget.available()).toBe(true);
    expect(budget.tryStart()).toBeNull();
    budget.finish(1);
    // Never more than one second's worth, however long it was idle.
    now += 1_000_000;
    for (let k = 0; k < 4; k += 1) {
      expect(budget.tryStart()).toBeNull();
      budget.finish(100);
    }
    expect(budget.tryStart()).toBe('budget');
  });

  it('skips when SHADOW_MAX_IN_FLIGHT runs wait or run, whatever the time left', () => {
    const budget = new ShadowBudget({ share: 1, engineHosts: 4, maxInFlight: 2, now: () => 0 });
    expect([budget.tryStart(), budget.tryStart(), budget.tryStart()]).toEqual([null, null, 'in_flight']);
    budget.finish(0);
    expect(budget.tryStart()).toBeNull();
  });

  it('with a share of 0 runs nothing', () => {
    const budget = new ShadowBudget({ share: 0, engineHosts: 4, maxInFlight: 2, now: () => 0 });
    expect(budget.tryStart()).toBe('budget');
  });
});
