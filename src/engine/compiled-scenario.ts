import type { ScenarioPlan } from './compiler/compile-scenario.js';
import type { PoolProgram } from './pool/engine-pool.js';
import type { VariableInfo } from './types.js';

/**
 * A scenario version compiled once: its plan (host side, immutable) and its program source. The program is
 * instantiated lazily inside each tenant's own sandbox, so two owners never share an instance, even of
 * identical content.
 */
export class CompiledScenario {
  /** @internal what the engine workers know of this compilation */
  readonly program: PoolProgram;

  constructor(
    readonly cacheKey: string,
    readonly plan: ScenarioPlan,
    programId: number,
  ) {
    this.program = { id: programId, source: plan.source, ...(plan.onnxModels ? { onnxModels: plan.onnxModels } : {}) };
  }

  get inputs(): VariableInfo[] {
    return this.plan.inputs;
  }
}
