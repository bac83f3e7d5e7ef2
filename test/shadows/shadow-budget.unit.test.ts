import { describe, expect, it } from '@jest/globals';
import { ShadowBudget } from '../../src/shadows/shadow-budget.js';

/** A budget on a test clock, a test engine-time counter and a test count of the pool's background work. */
function budgetOf(share: number, maxInFlight = 100) {
  const clock = { now: 0, engineMs: 0, idleMs: 0, background: { ms: 0, items: 0 } };
  const budget = new ShadowBudget({
    share,
    maxInFlight,
    now: () => clock.now,
    engineMs: () => clock.engineMs,
    idleMs: () => clock.idleMs,
    background: () => ({ ...clock.background }),
  });
  return { budget, clock };
}

describe('the shadow budget', () => {
  it('lets shadow work take at most its share of the engine time the process spends', () => {
    const { budget, clock } = budgetOf(0.25);
    // It starts with share × 100 ms (25 ms) in hand.
    expect(budget.tryStart('sh')).toBeNull();
    budget.finish('sh', 60);
    expect(budget.tryStart('sh')).toBe('budget');
    // 100 ms of engine time spent (by any lane) in 10 ms, the event loop busy: 25 ms more, still 10 short.
    clock.now += 10;
    clock.engineMs += 100;
    expect(budget.available()).toBe(false);
    clock.now += 10;
    clock.engineMs += 120;
    expect(budget.available()).toBe(true);
  });

  it('holds at most the share of 100 ms: after a lull, a burst passes the share by that much only', () => {
    const { budget, clock } = budgetOf(0.25);
    // A minute of engine time spent with no shadow run: 25 ms in hand, not 15 s.
    clock.now += 60_000;
    clock.engineMs += 60_000;
    let started = 0;
    while (budget.tryStart('sh') === null) {
      budget.finish('sh', 1);
      started += 1;
    }
    expect(started).toBe(25);
  });

  it('charges the engine pool’s own time for background messages, the shadow runs’ part of it', () => {
    const { budget, clock } = budgetOf(1);
    // 100 ms in hand; two shadow runs start.
    expect([budget.tryStart('sh'), budget.tryStart('sh')]).toEqual([null, null]);
    // The pool sent 10 background items (the two runs and eight of a replay) for 100 ms of this process's time:
    // the shadows are charged 20 of it, the replay's part is not theirs.
    clock.background = { ms: 100, items: 10 };
    clock.now += 1;
    expect(budget.available()).toBe(true);
    budget.charge(79);
    expect(budget.available()).toBe(true);
    budget.charge(1);
    expect(budget.available()).toBe(false);
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
    expect(shadowCost).toBeLessThanOrEqual(0.25 * engineSpent + 25 + 0.09);
    expect(shadowCost).toBeGreaterThan(0.2 * engineSpent);
  });

  it('charges the API side of shadow work done outside a run (writing rows)', () => {
    const { budget } = budgetOf(0.1);
    expect(budget.available()).toBe(true);
    budget.charge(100);
    expect(budget.tryStart('sh')).toBe('budget');
  });

  it('reserves the recent mean cost when a run starts, so a burst stops before the runs end', () => {
    const { budget } = budgetOf(1);
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
    budget.charge(50);
    // A busy event loop (no idle time) and no engine time: nothing earned, however long.
    clock.now += 10_000;
    expect(budget.available()).toBe(false);
    clock.now += 99;
    clock.idleMs += 99;
    expect(budget.available()).toBe(false);
    clock.now += 2;
    clock.idleMs += 2;
    expect(budget.available()).toBe(true);
    // Never more than share × 100 ms, however long it was idle.
    clock.now += 1_000_000;
    clock.idleMs += 1_000_000;
    budget.charge(25);
    expect(budget.available()).toBe(false);
  });

  it('counts idle time as much as the loop was idle: a loop idle half the time earns a quarter as much', () => {
    const { budget, clock } = budgetOf(0.25);
    budget.charge(25);
    // 80 ms, 40 of them idle: 20 ms counted, 5 ms earned.
    clock.now += 80;
    clock.idleMs += 40;
    budget.charge(4.9);
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
