import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';

/**
 * What a listener of finished runs (metrics, statistics) keeps per deployed scenario version, found on the hot
 * path through the version object itself: the resolver hands out the same object for every run while it caches
 * it, so a run costs a WeakMap look-up. Only for a new object (or a value `stale` gives up) is `make` called,
 * which finds or creates the value by the version's labels.
 */
export class PerVersion<T> {
  private readonly byVersionObject = new WeakMap<DeployedScenario, T>();

  constructor(private readonly make: (scenario: DeployedScenario) => T, private readonly stale: (value: T) => boolean = () => false) {}

  of(scenario: DeployedScenario): T {
    let value = this.byVersionObject.get(scenario);
    if (value === undefined || this.stale(value)) {
      value = this.make(scenario);
      this.byVersionObject.set(scenario, value);
    }
    return value;
  }
}
