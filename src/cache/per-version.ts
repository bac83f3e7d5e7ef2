/**
 * What a listener of finished runs (metrics, statistics) keeps per deployed scenario version, found on the hot
 * path through the version object itself: the resolver hands out the same object for every run while it caches
 * it, so a run costs a WeakMap look-up. Only for a new object (or a value `stale` gives up) is `make` called,
 * which finds or creates the value by the version's labels. Generic over the version's type, so that the
 * listeners need not import the scenarios feature (docs/architecture.md, "Boundaries as code").
 */
export class PerVersion<Version extends object, T> {
  private readonly byVersionObject = new WeakMap<Version, T>();

  constructor(
    private readonly make: (scenario: Version) => T,
    private readonly stale: (value: T) => boolean = () => false,
  ) {}

  of(scenario: Version): T {
    let value = this.byVersionObject.get(scenario);
    if (value === undefined || this.stale(value)) {
      value = this.make(scenario);
      this.byVersionObject.set(scenario, value);
    }
    return value;
  }
}
