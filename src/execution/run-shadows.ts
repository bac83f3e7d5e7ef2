import type { PortHooks } from '../engine/index.js';
import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';
import type { RunError } from './run-outcome.js';

/** A live run that has ended, as its shadows see it (after the caller's answer). */
export interface ChampionRun {
  /** The champion run's id (sync run id, or result id): its decision record's id. */
  runId: string;
  requestId: string;
  ownerId: number;
  inputs: Record<string, unknown>;
  beganAt: Date;
  result: Record<string, unknown> | null;
  /** The champion's error as it ended, unmasked: shadows mask it (maskError) before they store it. */
  error: RunError | null;
  /** A run error with the values of the champion version's pii inputs masked (RunErrorMasking). */
  maskError(error: RunError): RunError;
}

/** The shadows picked for one live run. */
export interface SampledShadows {
  /** The port hooks to run the champion with: they keep its HTTP answers for the shadows, and hand every call on to `inner` (the recording's) or the port. */
  hooks(inner: PortHooks | undefined): PortHooks;
  /** The champion ended: its shadows run in the background, after the caller's answer. Answers at once, never throws. */
  championFinished(run: ChampionRun): void;
}

/**
 * What the live tests feature offers execution (docs/live-tests.md): for a live run of a deployed
 * version, the shadows sampled to run beside it, or undefined. On the hot path: answers at once from
 * a cache, never waits on MySQL, never throws.
 */
export interface RunShadows {
  sample(deployed: DeployedScenario): SampledShadows | undefined;
}

export const NO_SHADOWS: RunShadows = { sample: () => undefined };
