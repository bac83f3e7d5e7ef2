/** The inputs of a run break the START node's declarations; `violations` lists all of them. */
export interface InputViolation {
  variable: string;
  message: string;
}

export class InputValidationError extends Error {
  readonly code = 'INPUT_INVALID';
  constructor(readonly violations: InputViolation[]) {
    super(`Invalid inputs: ${violations.map((v) => `${v.variable}: ${v.message}`).join('; ')}`);
    this.name = 'InputValidationError';
  }
}
