/** Why a sampled shadow run was not run. */
export type SkipReason = 'budget' | 'in_flight';

export interface ShadowBudgetOptions {
  /** Share of engine time shadow runs may take (SHADOW_ENGINE_SHARE), 0–1. */
  share: number;
  /** Engine hosts of the process (ENGINE_HOSTS): engine time is hosts × wall time. */
  engineHosts: number;
  /** Shadow runs waiting or running at once (SHADOW_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** Test clock, in milliseconds. */
  now?: () => number;
}

/**
 * The shadow runs' share of engine time in one process, as a token bucket: it fills at `share ×
 * engineHosts` milliseconds of engine time per millisecond, holds at most one second's worth, and each
 * shadow run takes the sandbox time the engine measured for it (its crossings', the scenarios it calls
 * included; a looping run its whole time limit). An empty bucket, or `maxInFlight` shadow runs already
 * waiting or running, skips the run (counted): shadow work is never queued without bound. A run is
 * charged when it ends, so a burst may pass the share by at most `maxInFlight` runs' time.
 */
export class ShadowBudget {
  private readonly ratePerMs: number;
  private readonly capacity: number;
  private readonly now: () => number;
  private tokens: number;
  private filledAt: number;
  inFlight = 0;

  constructor(private readonly options: ShadowBudgetOptions) {
    this.ratePerMs = options.share * options.engineHosts;
    this.capacity = this.ratePerMs * 1000;
    this.now = options.now ?? (() => performance.now());
    this.tokens = this.capacity;
    this.filledAt = this.now();
  }

  /** Takes a place for one shadow run, or says why not. */
  tryStart(): SkipReason | null {
    if (this.inFlight >= this.options.maxInFlight) return 'in_flight';
    const now = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.filledAt) * this.ratePerMs);
    this.filledAt = now;
    if (this.tokens <= 0) return 'budget';
    this.inFlight += 1;
    return null;
  }

  /** Why a shadow run would be skipped now, or null when it would find its place (nothing is taken). */
  refusal(): SkipReason | null {
    if (this.inFlight >= this.options.maxInFlight) return 'in_flight';
    return Math.min(this.capacity, this.tokens + (this.now() - this.filledAt) * this.ratePerMs) > 0 ? null : 'budget';
  }

  /** Whether a shadow run would find its place now. */
  available(): boolean {
    return this.refusal() === null;
  }

  /** A shadow run that took its place ended after `engineMs`. */
  finish(engineMs: number): void {
    this.inFlight -= 1;
    this.tokens -= engineMs;
  }
}
