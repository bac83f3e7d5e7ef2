import { AppError } from './app-error.js';

/** 431: the request line and headers are larger than the server reads (answered before routing). */
export class HeadersTooLargeError extends AppError {
  readonly status = 431;

  constructor(message: string) {
    super('HEADERS_TOO_LARGE', message);
  }
}
