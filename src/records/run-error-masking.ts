import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';
import type { InputMasker } from './input-masking.js';

/** The fields of a run's error that may quote inputs; the rest (code, node) is kept as is. */
export interface MaskableError {
  message: string;
  violations?: unknown;
}

/**
 * What execution calls before it stores an async run's or a batch element's error (`run_results.error_message`,
 * `error_details`): the error with the values of the version's pii-tagged inputs masked as in decision records
 * (quoted, escaped, cut, transformed, or in V8's snippet of a text it could not parse). Errors at rest never
 * carry a pii value (docs/records.md, "Where data lives").
 */
export interface RunErrorMasking {
  maskRunError<E extends MaskableError>(deployed: DeployedScenario, inputs: Record<string, unknown>, error: E): E;
}

export const NO_ERROR_MASKING: RunErrorMasking = { maskRunError: (_deployed, _inputs, error) => error };

/** RunErrorMasking with the records' masker (the same RECORDS_MASKING_SECRET, so a stored error's masks match its record's). */
export class PiiErrorMasking implements RunErrorMasking {
  constructor(private readonly masker: InputMasker) {}

  maskRunError<E extends MaskableError>(deployed: DeployedScenario, inputs: Record<string, unknown>, error: E): E {
    const names = this.masker.piiInputs(deployed.document);
    return names.length === 0 ? error : this.masker.maskError(error, names, inputs);
  }
}
