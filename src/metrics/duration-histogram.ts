import type { MeasuredMode } from './measured-run.js';

const MODES: readonly MeasuredMode[] = ['sync', 'async', 'batch'];

/**
 * scoring_run_duration_seconds: a Prometheus histogram by mode, counted in plain arrays and written
 * in the text format when scraped. prom-client's Histogram costs about a microsecond per observation
 * (it validates and hashes the labels and looks the bucket up by its string key on every call);
 * a run here costs a short scan of the bounds and two additions.
 */
export class DurationHistogram {
  /** Per mode: runs per bucket (not cumulative), the last one past the highest bound (+Inf). */
  private readonly counts: Record<MeasuredMode, number[]>;
  private readonly sums: Record<MeasuredMode, number> = { sync: 0, async: 0, batch: 0 };

  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly bounds: readonly number[],
  ) {
    const empty = () => new Array<number>(bounds.length + 1).fill(0);
    this.counts = { sync: empty(), async: empty(), batch: empty() };
  }

  observe(mode: MeasuredMode, seconds: number): void {
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]) bucket += 1;
    this.counts[mode][bucket] += 1;
    this.sums[mode] += seconds;
  }

  /** The histogram in Prometheus's text format (version 0.0.4): cumulative buckets, sum and count per mode. */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const mode of MODES) {
      let cumulative = 0;
      this.counts[mode].forEach((count, bucket) => {
        cumulative += count;
        const le = bucket < this.bounds.length ? String(this.bounds[bucket]) : '+Inf';
        lines.push(`${this.name}_bucket{le="${le}",mode="${mode}"} ${cumulative}`);
      });
      lines.push(
        `${this.name}_sum{mode="${mode}"} ${this.sums[mode]}`,
        `${this.name}_count{mode="${mode}"} ${cumulative}`,
      );
    }
    return `${lines.join('\n')}\n`;
  }
}
