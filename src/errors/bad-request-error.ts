import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class BadRequestError extends AppError {
  readonly status = 400;

  constructor(message: string, code: ErrorCode = 'VALIDATION_FAILED', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
