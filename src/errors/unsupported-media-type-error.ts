import { AppError, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './error-codes.js';

export class UnsupportedMediaTypeError extends AppError {
  readonly status = 415;

  constructor(message: string, code: ErrorCode = 'UNSUPPORTED_MEDIA_TYPE', details?: ErrorDetail[]) {
    super(code, message, details);
  }
}
