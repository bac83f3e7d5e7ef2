import type { Diagnostic } from '../types.js';

/** The document does not compile; `diagnostics` lists every problem found. */
export class ScenarioCompileError extends Error {
  readonly code = 'COMPILE_ERROR';
  constructor(readonly diagnostics: Diagnostic[]) {
    super(
      `Scenario does not compile: ${diagnostics.length} problem(s): ${diagnostics
        .slice(0, 3)
        .map((d) => d.message)
        .join('; ')}`,
    );
    this.name = 'ScenarioCompileError';
  }
}
