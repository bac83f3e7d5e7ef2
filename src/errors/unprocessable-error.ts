import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class UnprocessableError extends AppError {
  readonly status = 422;

  constructor(message: string, code: ErrorCode = 'VALIDATION_ERRORS', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
