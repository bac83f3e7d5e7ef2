/**
 * What the metrics count of a finished run. Execution's FinishedRun (src/execution/run-listener.ts) is one: the
 * composition root hands the metrics to execution as a RunListener, and tsc checks there that the two agree, so the
 * metrics import nothing of execution.
 */
export type MeasuredMode = 'sync' | 'async' | 'batch';

export interface MeasuredRun {
  /** The version that ran (the same object for every run of it while the resolver caches it). */
  scenario: { ownerName: string; name: string; version: string };
  mode: MeasuredMode;
  /** Null when the run succeeded; else its RunError code. */
  errorCode: string | null;
  durationMs: number;
}
