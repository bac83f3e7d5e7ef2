import type { Logger } from 'pino';

/**
 * A long-running process (API, worker) logs a promise rejection nobody handled instead of ending.
 * Agenda leaves some job-store calls unawaited (it releases locks fire-and-forget), so during a
 * job-store outage such a rejection would otherwise end a process that is still doing useful
 * work (sync scoring, running jobs from MySQL). Exceptions thrown synchronously still end it.
 */
export function logUnhandledRejections(logger: Logger): void {
  process.on('unhandledRejection', (reason: unknown) => {
    logger.error({ err: reason }, 'unhandled promise rejection; the process goes on');
  });
}
