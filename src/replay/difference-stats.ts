import type { components } from '../../generated/api-types.js';

/** The summary as a replay report carries it. */
type ReplayDifferences = components['schemas']['ReplayDifferences'];

/**
 * Differences new − old of one numeric output, kept exactly (8 bytes each: 800 KB for the largest
 * replay), summarised once at the end with exact nearest-rank quantiles.
 */
export class DifferenceStats {
  private values = new Float64Array(1024);
  private count = 0;
  private sumOld = 0;
  private sumNew = 0;

  add(oldValue: number, newValue: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count] = newValue - oldValue;
    this.count += 1;
    this.sumOld += oldValue;
    this.sumNew += newValue;
  }

  /** null when no pair was added. */
  summary(): ReplayDifferences | null {
    const n = this.count;
    if (n === 0) return null;
    const sorted = this.values.slice(0, n).sort();
    let sum = 0;
    for (let k = 0; k < n; k += 1) sum += sorted[k];
    return {
      count: n,
      meanOld: this.sumOld / n,
      meanNew: this.sumNew / n,
      mean: sum / n,
      p5: nearestRank(sorted, 5),
      p50: nearestRank(sorted, 50),
      p95: nearestRank(sorted, 95),
      min: sorted[0],
      max: sorted[n - 1],
    };
  }
}

/** The p-th percentile by nearest rank: the smallest value with at least p % of the values at or below it. */
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}
