import type { ErrorBody } from '../errors/error-handler.js';
import { isDatabaseUnavailable } from './mysql-errors.js';

/** What a request refused because MySQL is unavailable answers (with `Retry-After`, as every 503). */
export function databaseUnavailableBody(): ErrorBody {
  return {
    status: 503,
    code: 'DATABASE_UNAVAILABLE',
    message: 'The database is unavailable; nothing was changed. Send the request again later.',
  };
}

/** A driver error meaning "MySQL is unreachable" as its error body (503), or undefined for any other error. */
export function databaseOutageBody(error: unknown): ErrorBody | undefined {
  return isDatabaseUnavailable(error) ? databaseUnavailableBody() : undefined;
}
