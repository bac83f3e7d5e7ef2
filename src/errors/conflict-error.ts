import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class ConflictError extends AppError {
  readonly status = 409;

  constructor(message: string, code: ErrorCode = 'NAME_TAKEN', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
