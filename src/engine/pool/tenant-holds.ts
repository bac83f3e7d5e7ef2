/**
 * How many engine hosts each tenant holds right now, across every lane: one cap per tenant, so a tenant with
 * live, validation, batch and replay work queued still holds at most `cap` hosts, never one per lane.
 */
export class TenantHolds {
  private readonly held = new Map<number, number>();

  constructor(readonly cap: number) {}

  count(owner: number): number {
    return this.held.get(owner) ?? 0;
  }

  /** Whether `owner` may take one more host. */
  mayTake(owner: number): boolean {
    return this.count(owner) < this.cap;
  }

  take(owner: number): void {
    this.held.set(owner, this.count(owner) + 1);
  }

  release(owner: number): void {
    const left = this.count(owner) - 1;
    if (left > 0) this.held.set(owner, left);
    else this.held.delete(owner);
  }
}
