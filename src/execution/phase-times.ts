/**
 * Wall-clock milliseconds one piece of work spent per phase, for its debug log line (the batch path
 * logs them at debug level; `npm run bench:http` with BENCH_PHASES=1 sums them up). Each lap ends the
 * current phase; a phase may come back (a chunk runs and stores several slices).
 */
export class PhaseTimes {
  private last = performance.now();
  private readonly spent: Record<string, number> = {};

  /** Ends the phase that ran since the previous lap (or since creation), counting its time to `phase`. */
  lap(phase: string): void {
    const now = performance.now();
    this.spent[phase] = (this.spent[phase] ?? 0) + (now - this.last);
    this.last = now;
  }

  /** Every phase's total, rounded to 0.1 ms, as `<phase>Ms` fields. */
  fields(): Record<string, number> {
    const fields: Record<string, number> = {};
    for (const [phase, ms] of Object.entries(this.spent)) fields[`${phase}Ms`] = Math.round(ms * 10) / 10;
    return fields;
  }
}
