import type { ScenarioEngine } from '../engine/scenario-engine.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { PortUnavailableError } from '../engine/errors/port-unavailable-error.js';
import type { DeployedScenario, DeployedScenarios } from '../scenarios/deployed-scenarios.js';
import { runErrorCode, toRunError, type RunOutcome } from './run-outcome.js';
import { NO_RUN_LISTENER, type RunListener, type RunMode } from './run-listener.js';

/**
 * Resolves the latest deployed version of a scenario (through the scenarios feature) and runs it on
 * the engine (compilations are cached per version). Every run of a deployed version, in every mode,
 * goes through `run`, which tells the run listener (metrics, run statistics) how it ended.
 */
export class ScenarioRunner {
  constructor(
    private readonly engine: ScenarioEngine,
    private readonly scenarios: DeployedScenarios,
    private readonly listener: RunListener = NO_RUN_LISTENER,
  ) {}

  /** The latest deployed version, or 404 SCENARIO_NOT_FOUND / SCENARIO_NOT_DEPLOYED. */
  requireDeployed(ownerId: number, name: string): Promise<DeployedScenario> {
    return this.scenarios.require(ownerId, name);
  }

  /** Runs a deployed version; engine errors (bad inputs, compile and run failures) propagate. */
  async run(deployed: DeployedScenario, inputs: Record<string, unknown>, ownerId: number, mode: RunMode): Promise<Record<string, unknown>> {
    const started = performance.now();
    try {
      const compiled = this.engine.compile(deployed.cacheKey, deployed.document);
      const { result } = await this.engine.run(compiled, inputs, { ownerId });
      this.listener.runFinished({ scenario: deployed, mode, errorCode: null, durationMs: performance.now() - started });
      return result;
    } catch (error) {
      this.listener.runFinished({ scenario: deployed, mode, errorCode: runErrorCode(error), durationMs: performance.now() - started });
      throw error;
    }
  }

  /** Runs and captures the outcome, failures included (stored runs never throw). */
  async runToOutcome(deployed: DeployedScenario | Error, inputs: Record<string, unknown>, ownerId: number, mode: Exclude<RunMode, 'sync'>): Promise<RunOutcome> {
    const beganAt = new Date();
    if (deployed instanceof Error) return { state: 'FAILED', result: null, error: toRunError(deployed), version: null, beganAt, endedAt: beganAt };
    try {
      const result = await this.run(deployed, inputs, ownerId, mode);
      return { state: 'SUCCEEDED', result, error: null, version: deployed.version, beganAt, endedAt: new Date() };
    } catch (error) {
      // A dependency outage is not the run's outcome: the job fails and is tried again (retryWhileUnavailable).
      if (error instanceof PortUnavailableError) throw error;
      return { state: 'FAILED', result: null, error: toRunError(error), version: deployed.version, beganAt, endedAt: new Date() };
    }
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
