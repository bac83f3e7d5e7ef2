import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';

/** The arm a live run was given by a champion/challenger split. */
export interface SplitArmRun {
  /** The version that runs and decides: the champion's DeployedScenario, or a challenger's in its place. */
  deployed: DeployedScenario;
  /** The run ended (its caller's answer on its way): recorded for the split's report. Answers at once, never throws. */
  finished(result: Record<string, unknown> | null, failed: boolean, durationMs: number): void;
}

/**
 * What the live tests feature offers execution for splits (docs/live-tests.md): for a live run of a
 * deployed version, the arm of the scenario's RUNNING split it goes to, or undefined (no split). On the
 * hot path: answers at once from a cache, never waits on MySQL, never throws.
 */
export interface RunSplits {
  assign(deployed: DeployedScenario, inputs: Record<string, unknown>): SplitArmRun | undefined;
}

export const NO_SPLITS: RunSplits = { assign: () => undefined };
