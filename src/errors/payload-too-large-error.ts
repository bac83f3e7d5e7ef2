import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class PayloadTooLargeError extends AppError {
  readonly status = 413;

  constructor(message: string, code: ErrorCode = 'PAYLOAD_TOO_LARGE', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
