import type { Knex } from 'knex';
import type { ScenarioEngine } from '../engine/scenario-engine.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { DeployedScenario, DeployedScenarioResolver } from '../scenarios/deployed-scenario-resolver.js';
import { toRunError, type RunOutcome } from './run-outcome.js';

/** Resolves the latest deployed version of a scenario and runs it on the engine (compilations are cached per version). */
export class ScenarioRunner {
  constructor(
    private readonly engine: ScenarioEngine,
    private readonly scenarios: DeployedScenarioResolver,
    private readonly db: Knex,
  ) {}

  /** The latest deployed version, or 404 SCENARIO_NOT_FOUND / SCENARIO_NOT_DEPLOYED. */
  async requireDeployed(ownerId: number, name: string): Promise<DeployedScenario> {
    const deployed = await this.scenarios.find(ownerId, name);
    if (deployed) return deployed;
    // Only the miss path pays for telling the two 404s apart.
    const exists = await this.db('scenarios').where({ owner_id: ownerId, name }).first('id');
    if (exists) throw new NotFoundError(`Scenario "${name}" has no deployed version; deploy it first.`, 'SCENARIO_NOT_DEPLOYED');
    throw new NotFoundError(`You have no scenario named "${name}".`, 'SCENARIO_NOT_FOUND');
  }

  /** Runs a deployed version; engine errors (bad inputs, compile and run failures) propagate. */
  async run(deployed: DeployedScenario, inputs: Record<string, unknown>, ownerId: number): Promise<Record<string, unknown>> {
    const compiled = this.engine.compile(deployed.cacheKey, deployed.document);
    return (await this.engine.run(compiled, inputs, { ownerId })).result;
  }

  /** Runs and captures the outcome, failures included (stored runs never throw). */
  async runToOutcome(deployed: DeployedScenario | Error, inputs: Record<string, unknown>, ownerId: number): Promise<RunOutcome> {
    const beganAt = new Date();
    if (deployed instanceof Error) return { state: 'FAILED', result: null, error: toRunError(deployed), version: null, beganAt, endedAt: beganAt };
    try {
      const result = await this.run(deployed, inputs, ownerId);
      return { state: 'SUCCEEDED', result, error: null, version: deployed.version, beganAt, endedAt: new Date() };
    } catch (error) {
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
