import type { ScenarioPlan } from './compiler/compile-scenario.js';
import type { SandboxProgram } from './sandbox/sandbox.js';
import type { VariableInfo } from './types.js';

/** A scenario version compiled once: its plan (host side) and its program in the sandbox (re-created lazily). */
export class CompiledScenario {
  /** @internal entry in the current sandbox generation, null until first run or after eviction */
  program: SandboxProgram | null = null;

  constructor(readonly cacheKey: string, readonly plan: ScenarioPlan) {}

  get inputs(): VariableInfo[] {
    return this.plan.inputs;
  }

  /** @internal */
  releaseProgram(): void {
    try { this.program?.entry.release(); } catch { /* isolate already gone */ }
    this.program = null;
  }
}
