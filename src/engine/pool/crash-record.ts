/**
 * Which tenants' code was running when engine hosts died, and which of them are quarantined: a tenant whose
 * messages were running at `threshold` host deaths within `windowMs` is quarantined for `windowMs` from the last.
 */
export class CrashRecord {
  /** Death times (ms) per tenant, newest last, only those within the window. */
  private readonly deaths = new Map<number, number[]>();
  /** Quarantined tenants and when their quarantine ends (ms). */
  private readonly quarantined = new Map<number, number>();

  constructor(
    private readonly threshold: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a host death while `owner`'s code ran; true when this puts the tenant in quarantine. */
  crashed(owner: number): boolean {
    const now = this.now();
    const recent = (this.deaths.get(owner) ?? []).filter((at) => now - at < this.windowMs);
    recent.push(now);
    this.deaths.set(owner, recent);
    if (this.threshold <= 0 || recent.length < this.threshold) return false;
    const already = this.isQuarantined(owner);
    this.quarantined.set(owner, now + this.windowMs);
    return !already;
  }

  isQuarantined(owner: number): boolean {
    if (this.quarantined.size === 0) return false;
    const until = this.quarantined.get(owner);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.quarantined.delete(owner);
    this.deaths.delete(owner);
    return false;
  }

  quarantinedCount(): number {
    for (const owner of [...this.quarantined.keys()]) this.isQuarantined(owner);
    return this.quarantined.size;
  }
}
