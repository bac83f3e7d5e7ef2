import { describe, expect, it } from '@jest/globals';
import { ShadowBudget } from '../../src/shadows/shadow-budget.js';

/** A budget on a test clock and a test engine-time counter. */
function budgetOf(share: number, maxInFlight = 100) {
  const clock = { now: 0, engineMs: 0, idleMs: 0 };
  const budget = new ShadowBudget({
    share,
    maxInFlight,
    now: () => clock.now,
    engineMs: () => clock.engineMs,
    idleMs: () => clock.idleMs,
  });
  return { budget, clock };
}

describe('the shadow budget', () => {
  it('lets shadow work take at most its share of the engine time the process spends', () => {
    const { budget, clock } = budgetOf(0.25);
    // It starts with share × one second (250 ms) in hand.
    expect(budget.tryStart('sh')).toBeNull();
    budget.finish('sh', 300);
    expect(budget.tryStart('sh')).toBe('budget');
    // 100 ms of engine time spent (by any lane) in 10 ms, the event loop busy: 25 ms more, still 25 short.
    clock.now += 10;
    clock.engineMs += 100;
    expect(budget.available()).toBe(false);
    clock.now += 10;
    clock.engineMs += 120;
    expect(budget.available()).toBe(true);
  });

  it('bounds what shadows cost over a long run of live traffic, however cheap their sandbox time', () => {
    const { budget, clock } = budgetOf(0.25);
    let shadowCost = 0;
    let engineSpent = 0;
    // 100,000 live runs of 0.05 ms of engine time each, 2 ms apart on a busy event loop, each with a shadow
    // sampled: a shadow run costs 0.05 ms of engine time and 0.04 ms of the API's (hand-over, ending, its row).
    for (let run = 0; run < 100_000; run += 1) {
      clock.now += 2;
      clock.engineMs += 0.05;
      engineSpent += 0.05;
      if (budget.tryStart('sh') !== null) continue;
      clock.engineMs += 0.05;
      engineSpent += 0.05;
      budget.finish('sh', 0.05 + 0.04);
      shadowCost += 0.09;
    }
    // What shadows cost stays within the share of all the engine time spent (plus what the bucket held at first).
    expect(shadowCost).toBeLessThanOrEqual(0.25 * engineSpent + 250 + 0.09);
    expect(shadowCost).toBeGreaterThan(0.2 * engineSpent);
  });

  it('charges the API side of shadow work done outside a run (writing rows)', () => {
    const { budget } = budgetOf(0.1);
    expect(budget.available()).toBe(true);
    budget.charge(100);
    expect(budget.tryStart('sh')).toBe('budget');
  });

  it('reserves the recent mean cost when a run starts, so a burst stops before the runs end', () => {
    const { budget } = budgetOf(0.1);
    // Runs of 2 ms each teach the estimate; 100 ms held.
    for (let k = 0; k < 100; k += 1) {
      expect(budget.tryStart('sh')).toBeNull();
      budget.finish('sh', 0);
    }
    for (let k = 0; k < 60; k += 1) {
      budget.tryStart('sh');
      budget.finish('sh', 2);
    }
    let started = 0;
    while (budget.tryStart('sh') === null) started += 1;
    // Without reservations all 100 in flight would start; with them, about what the bucket holds.
    expect(started).toBeLessThan(99);
    expect(budget.inFlight).toBe(started);
  });

  it('reserves per shadow: a costly shadow’s runs do not make another’s reserve more', () => {
    const { budget, clock } = budgetOf(0.25);
    for (let k = 0; k < 40; k += 1) {
      clock.now += 1000;
      clock.idleMs += 1000;
      expect(budget.tryStart('looping')).toBeNull();
      budget.finish('looping', 200);
    }
    clock.now += 1000;
    clock.idleMs += 1000;
    // The looping shadow now reserves most of what is in hand for each run …
    let looping = 0;
    while (budget.tryStart('looping') === null) looping += 1;
    expect(looping).toBeLessThanOrEqual(2);
    for (let k = 0; k < looping; k += 1) budget.finish('looping', 0);
    clock.now += 1000;
    clock.idleMs += 1000;
    // … while the cheap one reserves nothing yet: its runs start while anything is in hand.
    let cheap = 0;
    while (cheap < 50 && budget.tryStart('cheap') === null) cheap += 1;
    expect(cheap).toBe(50);
  });

  it('fills with the share of the event loop’s idle time when that is more: an idle process still runs shadows', () => {
    const { budget, clock } = budgetOf(0.25);
    budget.charge(500);
    // A busy event loop (no idle time) and no engine time: nothing earned, however long.
    clock.now += 10_000;
    expect(budget.available()).toBe(false);
    clock.now += 999;
    clock.idleMs += 999;
    expect(budget.available()).toBe(false);
    clock.now += 2;
    clock.idleMs += 2;
    expect(budget.available()).toBe(true);
    // Never more than share × one second, however long it was idle.
    clock.now += 1_000_000;
    clock.idleMs += 1_000_000;
    budget.charge(250);
    expect(budget.available()).toBe(false);
  });

  it('counts idle time as much as the loop was idle: a loop idle half the time earns a quarter as much', () => {
    const { budget, clock } = budgetOf(0.25);
    budget.charge(250);
    // 1,000 ms, 500 of them idle: 250 ms counted, 62.5 ms earned.
    clock.now += 1000;
    clock.idleMs += 500;
    budget.charge(62);
    expect(budget.available()).toBe(true);
    budget.charge(1);
    expect(budget.available()).toBe(false);
  });

  it('skips when SHADOW_MAX_IN_FLIGHT runs wait or run, whatever the time left', () => {
    const { budget } = budgetOf(1, 2);
    expect([budget.tryStart('sh'), budget.tryStart('sh'), budget.tryStart('sh')]).toEqual([null, null, 'in_flight']);
    budget.finish('sh', 0);
    expect(budget.tryStart('sh')).toBeNull();
  });

  it('with a share of 0 runs nothing', () => {
    const { budget } = budgetOf(0, 2);
    expect(budget.tryStart('sh')).toBe('budget');
  });
});
