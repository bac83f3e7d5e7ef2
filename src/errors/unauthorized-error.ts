import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class UnauthorizedError extends AppError {
  readonly status = 401;

  constructor(message: string, code: ErrorCode = 'UNAUTHENTICATED', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
