/**
 * The job store cannot take or give work (it is down or unreachable). The API answers 503
 * JOB_STORE_UNAVAILABLE with Retry-After; a worker's job that fails with it is retried later.
 */
export class JobStoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JobStoreUnavailableError';
  }
}
