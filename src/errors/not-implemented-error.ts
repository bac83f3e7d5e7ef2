import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class NotImplementedError extends AppError {
  readonly status = 501;

  constructor(message: string, code: ErrorCode = 'NOT_IMPLEMENTED', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
