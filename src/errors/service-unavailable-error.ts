import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

/**
 * A dependency (MySQL, the job store) is unavailable: nothing was done, and the same request may
 * be sent again later. Answered with a `Retry-After` header (error-handler.ts).
 */
export class ServiceUnavailableError extends AppError {
  readonly status = 503;

  constructor(message: string, code: ErrorCode = 'SERVICE_UNAVAILABLE', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
