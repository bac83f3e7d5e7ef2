import { databaseOutageBody } from '../db/database-outage.js';
import { toErrorBody, type ErrorBody, type ErrorTranslator } from '../errors/error-handler.js';
import { engineErrorBody } from './engine-error-body.js';

/** What the API knows of errors beyond AppErrors: MySQL's outages (503) and the engine's errors (400, 422, 503). */
export const API_ERROR_TRANSLATORS: readonly ErrorTranslator[] = [databaseOutageBody, engineErrorBody];

/** An error's body as the API answers it (both lanes, and the server's own refusals). */
export function toApiErrorBody(error: unknown): ErrorBody {
  return toErrorBody(error, API_ERROR_TRANSLATORS);
}
