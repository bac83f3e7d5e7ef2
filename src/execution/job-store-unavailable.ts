import { ServiceUnavailableError } from '../errors/service-unavailable-error.js';
import { JobStoreUnavailableError } from './job-store-unavailable-error.js';

/**
 * What a submission whose job the job store did not take answers (its stored work was removed
 * again). Only job-store failures become 503 JOB_STORE_UNAVAILABLE; anything else (a MySQL outage
 * while undoing) keeps its own meaning.
 */
export function jobStoreUnavailable(cause: unknown): unknown {
  if (!(cause instanceof JobStoreUnavailableError)) return cause;
  return new ServiceUnavailableError(
    `The job store is unavailable (${cause.message}); nothing was stored, so the same request can be sent again later.`,
    'JOB_STORE_UNAVAILABLE',
  );
}
