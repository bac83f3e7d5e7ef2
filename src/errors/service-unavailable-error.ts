import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class ServiceUnavailableError extends AppError {
  readonly status = 503;

  constructor(message: string, code: ErrorCode = 'SERVICE_UNAVAILABLE', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
