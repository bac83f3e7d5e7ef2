import type { Logger } from 'pino';

export interface Shutdown {
  /** Logged once, at the first SIGTERM or SIGINT. */
  stopping: string;
  /** Logged if `stop` fails. */
  failed: string;
  /** The process is forced out (exit 1) this long after the first signal if `stop` has not finished. */
  forceExitMs: number;
  /** Stops the process's work; it exits 0 once this resolves and its last log lines are written, 1 if it fails. */
  stop: () => Promise<void>;
}

/**
 * How the API and the worker processes stop: at the first SIGTERM or SIGINT (later ones are ignored), log
 * `stopping`, run `stop`, write the buffered log lines (the destination is asynchronous, logger.ts) and exit;
 * a stop still running after `forceExitMs` ends the process with exit code 1.
 */
export function stopOnSignals(logger: Logger, shutdown: Shutdown): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, shutdown.stopping);
    logger.flush();
    const force = setTimeout(() => {
      logger.error('shutdown did not finish in time; forced out');
      logger.flush();
      process.exit(1);
    }, shutdown.forceExitMs);
    force.unref();
    shutdown
      .stop()
      .then(() => flushLogs(logger))
      .then(() => process.exit(0))
      .catch(async (error: unknown) => {
        logger.error({ err: error }, shutdown.failed);
        await flushLogs(logger);
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function flushLogs(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
