import type { RunLane } from '../types.js';

/**
 * How many engine hosts each tenant holds right now, across every lane: one cap per tenant, so a tenant with
 * live, validation, batch and replay work queued still holds at most `cap` hosts, never one per lane. Of these,
 * work nobody waits on at once (validation, bulk, background) holds at most `cap - 1` (at least one), so a tenant
 * whose batch loops still has a host for its own scores.
 */
export class TenantHolds {
  private readonly held = new Map<number, { all: number; deferred: number }>();
  private readonly deferredCap: number;

  constructor(readonly cap: number) {
    this.deferredCap = Math.max(1, cap - 1);
  }

  count(owner: number): number {
    return this.held.get(owner)?.all ?? 0;
  }

  /** Whether `owner` may take one more host for work of `lane`. */
  mayTake(owner: number, lane: RunLane = 'live'): boolean {
    const held = this.held.get(owner);
    if (!held) return true;
    return held.all < this.cap && (lane === 'live' || held.deferred < this.deferredCap);
  }

  take(owner: number, lane: RunLane = 'live'): void {
    const held = this.held.get(owner) ?? { all: 0, deferred: 0 };
    held.all++;
    if (lane !== 'live') held.deferred++;
    this.held.set(owner, held);
  }

  release(owner: number, lane: RunLane = 'live'): void {
    const held = this.held.get(owner);
    if (!held) return;
    held.all--;
    if (lane !== 'live') held.deferred--;
    if (held.all <= 0) this.held.delete(owner);
  }
}
