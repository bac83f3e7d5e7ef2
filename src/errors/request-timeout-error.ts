import { AppError } from './app-error.js';

/** 408: the request's headers did not arrive within the server's header timeout (answered before routing). */
export class RequestTimeoutError extends AppError {
  readonly status = 408;

  constructor(message: string) {
    super('REQUEST_TIMEOUT', message);
  }
}
