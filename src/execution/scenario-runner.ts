import type { RunLane, TraceEntry } from '../engine/index.js';
import type { ScenarioEngine } from '../engine/scenario-engine.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { isDatabaseUnavailable } from '../db/mysql-errors.js';
import { PortUnavailableError } from '../engine/errors/port-unavailable-error.js';
import {
  NOT_RECORDING,
  type RecordedOutcome,
  type RunRecorder,
  type RunRecording,
  type RunToRecord,
} from '../records/run-recorder.js';
import { NO_ERROR_MASKING, type RunErrorMasking } from '../records/run-error-masking.js';
import type { DeployedScenario, DeployedScenarios } from '../scenarios/deployed-scenarios.js';
import { runErrorCode, toRunError, type RunOutcome } from './run-outcome.js';
import { NO_RUN_LISTENER, type RunListener, type RunMode } from './run-listener.js';
import { NO_SHADOWS, type RunShadows, type SampledShadows } from './run-shadows.js';
import { NO_SPLITS, type RunSplits, type SplitArmRun } from './run-splits.js';

/**
 * Resolves the latest deployed version of a scenario (through the scenarios feature) and runs it on
 * the engine (compilations are cached per version). Every run of a deployed version, in every mode,
 * goes through `run`, which tells the run listener (metrics, run statistics) how it ended; runs given a
 * `RunToRecord` are recorded when their scenario's recording settings say so (the records feature's RunRecorder).
 */
export class ScenarioRunner {
  constructor(
    private readonly engine: ScenarioEngine,
    private readonly scenarios: DeployedScenarios,
    private readonly listener: RunListener = NO_RUN_LISTENER,
    private readonly recorder: RunRecorder = NOT_RECORDING,
    private readonly errorMasking: RunErrorMasking = NO_ERROR_MASKING,
    /** The shadows of live versions (the live tests feature): run after the champion, in the background. */
    private readonly shadows: RunShadows = NO_SHADOWS,
    /** The champion/challenger splits of live versions (the live tests feature): a challenger may run in the champion's place. */
    private readonly splits: RunSplits = NO_SPLITS,
  ) {}

  /**
   * The arm of the scenario's split a live run (one with a run id) goes to: its `deployed` is the
   * version to run and answer with (the champion's, or a challenger's); undefined without a split.
   */
  assignArm(
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    record: RunToRecord | undefined,
  ): SplitArmRun | undefined {
    return record ? this.splits.assign(deployed, inputs) : undefined;
  }

  /** The latest deployed version, or 404 SCENARIO_NOT_FOUND / SCENARIO_NOT_DEPLOYED. */
  requireDeployed(ownerId: number, name: string): Promise<DeployedScenario> {
    return this.scenarios.require(ownerId, name);
  }

  /**
   * Runs a deployed version (with `arm`, the one assignArm gave: told how the run ended); engine errors
   * (bad inputs, compile and run failures) propagate.
   */
  async run(
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    ownerId: number,
    mode: RunMode,
    record?: RunToRecord,
    arm?: SplitArmRun,
  ): Promise<Record<string, unknown>> {
    const started = performance.now();
    const beganAt = new Date();
    // Live runs (they have a run id) may have shadows: picked from a cache, at once.
    const shadows = record ? this.shadows.sample(deployed) : undefined;
    try {
      // start answers at once (no promise) when the scenario's settings are cached: no await on the hot path then.
      const starting = record && this.recorder.start(deployed, inputs, record);
      const recording = starting instanceof Promise ? await starting : starting;
      // Batch elements wait in the engine pool's bulk lane: a batch never holds up scores, its owner's included.
      const lane: RunLane = mode === 'batch' ? 'bulk' : 'live';
      const result = recording
        ? await this.runRecorded(deployed, inputs, ownerId, lane, recording, shadows)
        : await this.runUnrecorded(deployed, inputs, ownerId, lane, shadows);
      this.listener.runFinished({ scenario: deployed, mode, errorCode: null, durationMs: performance.now() - started });
      if (shadows && record) this.championFinished(shadows, deployed, inputs, ownerId, record, beganAt, result, null);
      arm?.finished(result, false, performance.now() - started);
      return result;
    } catch (error) {
      this.listener.runFinished({
        scenario: deployed,
        mode,
        errorCode: runErrorCode(error),
        durationMs: performance.now() - started,
      });
      // A dependency outage is no outcome of the champion's: nothing to compare.
      const outcome = !(error instanceof PortUnavailableError) && !isDatabaseUnavailable(error);
      if (shadows && record && outcome)
        this.championFinished(shadows, deployed, inputs, ownerId, record, beganAt, null, toRunError(error));
      if (outcome) arm?.finished(null, true, performance.now() - started);
      throw error;
    }
  }

  /** Hands the champion's outcome to its shadows, which run it after the caller's answer. */
  private championFinished(
    shadows: SampledShadows,
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    ownerId: number,
    record: RunToRecord,
    beganAt: Date,
    result: Record<string, unknown> | null,
    error: RunOutcome['error'],
  ): void {
    shadows.championFinished({
      runId: record.id,
      requestId: record.requestId,
      ownerId,
      inputs,
      beganAt,
      result,
      error,
      maskError: (runError) => this.errorMasking.maskRunError(deployed, inputs, runError),
    });
  }

  private async runUnrecorded(
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    ownerId: number,
    lane: RunLane,
    shadows: SampledShadows | undefined,
  ): Promise<Record<string, unknown>> {
    const compiled = this.engine.compile(deployed.cacheKey, deployed.document);
    if (shadows)
      return (await this.engine.run(compiled, inputs, { ownerId, lane, portHooks: shadows.hooks(undefined) })).result;
    return (await this.engine.run(compiled, inputs, { ownerId, lane })).result;
  }

  /** Runs and captures the outcome, failures included (stored runs never throw). */
  async runToOutcome(
    champion: DeployedScenario | Error,
    inputs: Record<string, unknown>,
    ownerId: number,
    mode: Exclude<RunMode, 'sync'>,
    record?: RunToRecord,
  ): Promise<RunOutcome> {
    const beganAt = new Date();
    // No deployed version, no scenario to file a record under: the stored run keeps the error.
    if (champion instanceof Error)
      return { state: 'FAILED', result: null, error: toRunError(champion), version: null, beganAt, endedAt: beganAt };
    const arm = this.assignArm(champion, inputs, record);
    const deployed = arm?.deployed ?? champion;
    try {
      const result = await this.run(deployed, inputs, ownerId, mode, record, arm);
      return { state: 'SUCCEEDED', result, error: null, version: deployed.version, beganAt, endedAt: new Date() };
    } catch (error) {
      // A dependency outage (a lookup's, or reading the recording settings) is not the run's outcome:
      // the job fails and is tried again (retryWhileUnavailable).
      if (error instanceof PortUnavailableError || isDatabaseUnavailable(error)) throw error;
      // Stored in run_results: the values of pii-tagged inputs it quotes are masked first.
      return {
        state: 'FAILED',
        result: null,
        error: this.errorMasking.maskRunError(deployed, inputs, toRunError(error)),
        version: deployed.version,
        beganAt,
        endedAt: new Date(),
      };
    }
  }

  /** A run with its trace (when the recording asks for it) and port calls recorded, failures included (the error is rethrown). */
  private async runRecorded(
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    ownerId: number,
    lane: RunLane,
    recording: RunRecording,
    shadows: SampledShadows | undefined,
  ): Promise<Record<string, unknown>> {
    const beganAt = new Date();
    const started = performance.now();
    // recording.finish buffers the record at once (sync), or holds it for the transaction of the run's outcome
    // (RunToRecord.hold). Called on the recording, not through a closure: tsx wraps every closure it makes in a
    // naming helper, a µs per run.
    let outcome: Awaited<ReturnType<ScenarioEngine['run']>>;
    try {
      const compiled = this.engine.compile(deployed.cacheKey, deployed.document);
      const portHooks = shadows ? shadows.hooks(recording.portHooks) : recording.portHooks;
      outcome = await this.engine.run(compiled, inputs, { ownerId, lane, trace: recording.trace, portHooks });
    } catch (error) {
      // A dependency outage abandons the run (503, or the job runs again): nothing to record.
      if (!(error instanceof PortUnavailableError))
        recording.finish(recordedOutcome(null, toRunError(error), undefined, beganAt, started));
      throw error;
    }
    recording.finish(recordedOutcome(outcome.result, null, outcome.trace, beganAt, started));
    return outcome.result;
  }

  /**
   * Records a stored run that ended without running (RUN_ABANDONED: started too often without
   * finishing), as its scenario's settings say, like any other failed run. A run whose scenario is
   * gone has no record (as runs that never reached a deployed version).
   */
  async recordUnrun(
    deployed: DeployedScenario | Error,
    inputs: Record<string, unknown>,
    record: RunToRecord,
    outcome: RunOutcome,
  ): Promise<void> {
    if (deployed instanceof Error) return;
    const recording = await this.recorder.start(deployed, inputs, record);
    recording?.finish({
      result: null,
      error: outcome.error,
      beganAt: outcome.beganAt,
      endedAt: outcome.endedAt,
      durationMicros: 0,
    });
  }

  /** requireDeployed, with a missing scenario as a value (stored runs record it as their error). */
  async resolveForStoredRun(ownerId: number, name: string): Promise<DeployedScenario | Error> {
    try {
      return await this.requireDeployed(ownerId, name);
    } catch (error) {
      if (error instanceof NotFoundError) return error;
      throw error;
    }
  }
}

/** How a recorded run ended, timed from `beganAt` (and `started`, on performance.now()'s clock). */
function recordedOutcome(
  result: Record<string, unknown> | null,
  error: RunOutcome['error'],
  trace: TraceEntry[] | undefined,
  beganAt: Date,
  started: number,
): RecordedOutcome {
  return {
    result,
    error,
    trace,
    beganAt,
    endedAt: new Date(),
    durationMicros: Math.round((performance.now() - started) * 1000),
  };
}
