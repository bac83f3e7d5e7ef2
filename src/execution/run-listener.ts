import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';

/** How a run was asked for: a synchronous score, an async submission, or an element of a batch. */
export type RunMode = 'sync' | 'async' | 'batch';

/** A run of a deployed version that has ended, as the run's listeners see it. */
export interface FinishedRun {
  /** The version that ran (the same object for every run of it while the resolver caches it). */
  scenario: DeployedScenario;
  mode: RunMode;
  /** Null when the run succeeded; else its RunError code (`INVALID_INPUT`, `TIME_LIMIT_EXCEEDED`, …). */
  errorCode: string | null;
  /** Compile (cached after the first run of a version) plus run, in milliseconds. */
  durationMs: number;
}

/**
 * Told of every run of a deployed version by ScenarioRunner, on the hot path: implementations must
 * answer at once (count in memory, write later) and never throw. Metrics and run statistics listen.
 * Debug runs and test cases do not go through ScenarioRunner, so they are not told.
 */
export interface RunListener {
  runFinished(run: FinishedRun): void;
}

export const NO_RUN_LISTENER: RunListener = { runFinished: () => undefined };

/** One listener telling several, in order. */
export function runListeners(...listeners: RunListener[]): RunListener {
  if (listeners.length === 1) return listeners[0];
  return {
    runFinished(run) {
      for (const listener of listeners) listener.runFinished(run);
    },
  };
}
