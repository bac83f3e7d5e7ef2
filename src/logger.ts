import { pino, type Logger } from 'pino';

/** The longest a log line waits in the buffer before it is written. */
export const LOG_FLUSH_MS = 1000;

/**
 * Structured JSON logs on stdout. Secrets (tokens, authorization headers) are redacted. Lines are buffered and
 * written asynchronously in 4 KiB batches (one write per request costs a tenth of a score), but never later
 * than LOG_FLUSH_MS after they were logged, and at once when the process exits: pino registers its destination to
 * be written synchronously on 'exit' (every path but SIGKILL: process.exit from a signal handler or the force
 * timer, an uncaught exception; test/logger.test.ts). Start-up lines are worth seeing at once: call
 * `logger.flush()` after them.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const logger = pino({
    level,
    base: { service: 'scenario-scoring' },
    redact: { paths: ['*.authorization', '*.scoreToken', '*.key', '*["score-token"]', 'req.headers.authorization'], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  }, destination);
  if (level !== 'silent') {
    const timer = setInterval(() => {
      try {
        logger.flush();
      } catch {
        // not open yet: the next tick writes it
      }
    }, LOG_FLUSH_MS);
    timer.unref();
    destination.on('close', () => clearInterval(timer));
  }
  return logger;
}
