import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class ForbiddenError extends AppError {
  readonly status = 403;

  constructor(message: string, code: ErrorCode = 'FORBIDDEN', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
