import { BadRequestError } from '../errors/bad-request-error.js';

/** The range a date-time parameter may name: from the epoch to the end of year 9999 (UTC). */
const EARLIEST_MS = 0;
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * A date-time the spec's validation let through (RFC 3339, checked in full) as a Date, or 400 naming
 * `path` when it lies outside 1970–9999 in UTC: `0000-01-01T00:00:00Z` and `9999-12-31T23:59:59-23:59`
 * (year 10000 in UTC) are valid RFC 3339 text, but no record or statistic is dated so, and Dates that
 * far out do not survive being written back (`+010000-…`) or compared as text by the database.
 */
function dateTimeParameter(text: string, path: string): Date {
  const ms = Date.parse(text);
  if (!(ms >= EARLIEST_MS && ms <= LATEST_MS)) {
    throw new BadRequestError(
      `${path} must lie between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z (UTC): ${text} does not.`,
      'VALIDATION_FAILED',
      [{ path, message: 'must lie between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z (UTC)' }],
    );
  }
  return new Date(ms);
}

/** dateTimeParameter of a parameter that may be absent. */
export function optionalDateTimeParameter(text: string | undefined, path: string): Date | undefined {
  return text === undefined ? undefined : dateTimeParameter(text, path);
}
