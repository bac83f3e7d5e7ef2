/** Why a sampled shadow run was not run. */
export type SkipReason = 'budget' | 'in_flight';

export interface ShadowBudgetOptions {
  /** Share of the engine time this process spends that shadow work may take (SHADOW_ENGINE_SHARE), 0–1. */
  share: number;
  /** Shadow runs waiting or running at once (SHADOW_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /**
   * The engine time this process has spent so far, in ms, every lane and shadows included (the engine pool's
   * crossing time, summed over its hosts): a counter that only grows.
   */
  engineMs: () => number;
  /** How long this process's event loop has been idle so far, in ms (a counter that only grows): the API's spare time. */
  idleMs?: () => number;
  /**
   * The engine pool's own time for background messages so far (building and sending them, taking in their answers),
   * in ms, and the items sent in them: counters that only grow. Shadow runs are charged their items' part of it (the
   * background lane also carries replays, ADR 0028).
   */
  background?: () => { ms: number; items: number };
  /** Test clock, in milliseconds. */
  now?: () => number;
}

/** What one shadow's runs cost lately (a moving mean, ms), and what its runs in flight reserved. */
type ShadowCosts = Record<'estimateMs' | 'reservedMs' | 'inFlight', number>;

/**
 * The bucket holds at most the share of this much time: a process whose shadows were idle (a lull, or a scenario
 * without traffic) may pass its share by this much at once, no more (ADR 0028: the share of a whole second let a burst
 * of shadow runs take the engine hosts and the event loop for over a second once traffic came back).
 */
const BURST_MS = 100;
const NO_BACKGROUND = { ms: 0, items: 0 };
/** Weight of a shadow's last run in the estimate of its next one's cost. */
const ESTIMATE_WEIGHT = 0.05;
/** Shadows whose cost estimates are kept (past it, those with no run in flight are forgotten). */
const MAX_ESTIMATES = 10_000;

/**
 * What shadow work may cost one process, as a token bucket (docs/adr/0023-shadow-budget-of-spent-engine-time.md,
 * docs/adr/0028-shadow-costs-charged-in-full.md). It fills with `share` of the engine time the process spends, every
 * lane and the shadows' own included — or, when that is more, of the time its event loop was idle, weighted by how
 * idle it was (so an idle process still runs shadows, and a busy one's shadows are paid by its live runs' engine
 * time) — and holds at most `share` × BURST_MS. Shadow work takes from it everything it costs: each run's sandbox
 * time as the engine measured it (a looping run its whole time limit) and the API process's own time for it (the
 * sampling, the champion's outcome handed over, the run started and finished, its row written: `charge`; the engine
 * pool's background messages: `background`). A run reserves the recent mean cost of its shadow's runs when it starts
 * (per shadow: a looping shadow's cost says nothing of another's), and is charged what it really cost when it ends,
 * so a burst cannot pass the share by the runs in flight. An empty bucket, or
 * `maxInFlight` shadow runs already waiting or running, skips the run (counted): shadow work is never queued
 * without bound.
 */
export class ShadowBudget {
  private readonly capacity: number;
  private readonly now: () => number;
  private tokens: number;
  private creditedAt: number;
  private engineSeen: number;
  private idleSeen: number;
  private readonly idleMs: () => number;
  private readonly background: () => { ms: number; items: number };
  private backgroundSeen: { ms: number; items: number };
  /** Shadow runs started whose pool items have not been charged yet. */
  private unchargedRuns = 0;
  private readonly costs = new Map<string, ShadowCosts>();
  inFlight = 0;

  constructor(private readonly options: ShadowBudgetOptions) {
    this.capacity = options.share * BURST_MS;
    this.now = options.now ?? (() => performance.now());
    this.tokens = this.capacity;
    this.creditedAt = this.now();
    this.engineSeen = options.engineMs();
    this.idleMs = options.idleMs ?? (() => performance.eventLoopUtilization().idle);
    this.idleSeen = this.idleMs();
    this.background = options.background ?? (() => NO_BACKGROUND);
    this.backgroundSeen = this.background();
  }

  /** Takes a place for one run of the shadow, or says why not. */
  tryStart(shadowId: string): SkipReason | null {
    const refused = this.refusal();
    if (refused) return refused;
    const costs = this.costsOf(shadowId);
    this.inFlight += 1;
    costs.inFlight += 1;
    costs.reservedMs += costs.estimateMs;
    // Bounded: a run that ends before the engine (a shadow that does not compile) has no item to be charged.
    this.unchargedRuns = Math.min(this.unchargedRuns + 1, this.options.maxInFlight);
    this.tokens -= costs.estimateMs;
    return null;
  }

  /** Why a shadow run would be skipped now, or null when it would find its place (nothing is taken). */
  refusal(): SkipReason | null {
    if (this.inFlight >= this.options.maxInFlight) return 'in_flight';
    this.credit();
    return this.tokens > 0 ? null : 'budget';
  }

  /** Whether a shadow run would find its place now. */
  available(): boolean {
    return this.refusal() === null;
  }

  /** A run of the shadow that took its place ended, having cost `costMs` (its engine time and the API's time for it). */
  finish(shadowId: string, costMs: number): void {
    this.credit();
    const costs = this.costsOf(shadowId);
    const reserved = costs.inFlight > 0 ? costs.reservedMs / costs.inFlight : 0;
    this.inFlight = Math.max(0, this.inFlight - 1);
    costs.inFlight = Math.max(0, costs.inFlight - 1);
    costs.reservedMs -= reserved;
    this.tokens += reserved - costMs;
    costs.estimateMs += ESTIMATE_WEIGHT * (costMs - costs.estimateMs);
  }

  /** Shadow work of the API process outside any one run (the hand-off of a turn's runs, a write of their rows). */
  charge(ms: number): void {
    this.credit();
    this.tokens -= ms;
  }

  private costsOf(shadowId: string): ShadowCosts {
    let costs = this.costs.get(shadowId);
    if (!costs) {
      if (this.costs.size >= MAX_ESTIMATES)
        for (const [id, known] of this.costs) if (known.inFlight === 0) this.costs.delete(id);
      costs = { estimateMs: 0, reservedMs: 0, inFlight: 0 };
      this.costs.set(shadowId, costs);
    }
    return costs;
  }

  private credit(): void {
    const now = this.now();
    // Read at most once a millisecond: a sampled live run asks at least once, and a millisecond adds little.
    if (now - this.creditedAt < 1) return;
    const engine = this.options.engineMs();
    const idle = this.idleMs();
    // Idle time counts as much as the loop was idle: a busy API's loop is idle mostly while it waits for the engine
    // hosts, which are then busy (at full load under the bench: about a third of the time idle, a ninth counted).
    const idleShare = Math.min(1, (idle - this.idleSeen) / (now - this.creditedAt));
    const earned = Math.max(engine - this.engineSeen, (idle - this.idleSeen) * idleShare);
    this.engineSeen = engine;
    this.idleSeen = idle;
    this.creditedAt = now;
    this.tokens = Math.min(this.capacity, this.tokens + this.options.share * earned) - this.backgroundCharge();
  }

  /** The pool's time for the background items sent since the last look, the shadow runs' part of it (the rest: replays'). */
  private backgroundCharge(): number {
    const background = this.background();
    const items = background.items - this.backgroundSeen.items;
    if (items <= 0) return 0;
    const ms = background.ms - this.backgroundSeen.ms;
    this.backgroundSeen = background;
    const shadows = Math.min(items, this.unchargedRuns);
    this.unchargedRuns -= shadows;
    return (ms * shadows) / items;
  }
}
