/**
 * Thrown by a port when the service behind it is unavailable (MySQL for lookups): the run did not
 * fail on its own account, so the engine does not turn this into a run error (LOOKUP_FAILED would
 * tell the caller its scenario is at fault). It passes through `run` unchanged; the API answers 503
 * and a worker tries the job again later.
 */
export class PortUnavailableError extends Error {
  constructor(
    readonly dependency: 'database',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PortUnavailableError';
  }
}
