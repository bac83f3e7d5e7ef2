import { ServiceUnavailableError } from '../errors/service-unavailable-error.js';

/** The 503 of a submission whose job the job store did not take (the stored work was removed again). */
export function jobStoreUnavailable(cause: unknown): ServiceUnavailableError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new ServiceUnavailableError(`The job store did not take the work (${reason}); nothing was stored, so the same request can be sent again.`);
}
