import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class NotFoundError extends AppError {
  readonly status = 404;

  constructor(message: string, code: ErrorCode = 'ROUTE_NOT_FOUND', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
