import { pino, type Logger } from 'pino';
import { safeErrorReason } from './db/mysql-errors.js';

/** Properties of driver errors that hold what a statement carried (its SQL, its values). */
const STATEMENT_FIELDS = ['sql', 'bindings', 'parameters', 'values'];

/** The longest a log line waits in the buffer before it is written. */
const LOG_FLUSH_MS = 1000;

/**
 * Structured JSON logs on stdout. Secrets (tokens, authorization headers) are redacted. Lines are buffered and
 * written asynchronously in 4 KiB batches (one write per request costs a tenth of a score), but never later
 * than LOG_FLUSH_MS after they were logged, and at once when the process exits: pino registers its destination to
 * be written synchronously on 'exit' (every path but SIGKILL: process.exit from a signal handler or the force
 * timer, an uncaught exception; test/logger.test.ts). Start-up lines are worth seeing at once: call
 * `logger.flush()` after them. Logged errors never carry a statement (safeError). Tests may pass another
 * `destination` to read the lines.
 */
export function createLogger(
  level: string,
  destination: pino.DestinationStream = pino.destination({ dest: 1, sync: false, minLength: 4096 }),
): Logger {
  const logger = pino(
    {
      level,
      base: { service: 'scenario-scoring' },
      redact: {
        paths: ['*.authorization', '*.scoreToken', '*.key', '*["score-token"]', 'req.headers.authorization'],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: safeError },
    },
    destination,
  );
  if (level !== 'silent') {
    const timer = setInterval(() => {
      try {
        logger.flush();
      } catch {
        // not open yet: the next tick writes it
      }
    }, LOG_FLUSH_MS);
    timer.unref();
    (destination as unknown as { on?: (event: string, listener: () => void) => void }).on?.('close', () =>
      clearInterval(timer),
    );
  }
  return logger;
}

/**
 * pino's error serializer, without what a statement carried: a query error's message (and the stack's
 * first line) start with its whole SQL, inputs and results included, and mysql2 adds it as `sql` too. A
 * failing write of a replay's report logged a line of 57 MB every 31 s (issue 27, problem 2). The
 * message becomes safeErrorReason's (code and server message; other messages cut to 1,000 characters).
 */
function safeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (typeof error !== 'object' || error === null || typeof serialized !== 'object' || serialized === null)
    return serialized;
  for (const field of STATEMENT_FIELDS) delete serialized[field];
  const reason = safeErrorReason(error);
  if (serialized.message !== reason) {
    serialized.message = reason;
    if (typeof serialized.stack === 'string') {
      const frames = serialized.stack.split('\n').filter((line) => line.startsWith('    at '));
      serialized.stack = [`${String(serialized.type ?? 'Error')}: ${reason}`, ...frames].join('\n');
    }
  }
  const { cause } = error as { cause?: unknown };
  if (cause !== undefined && typeof cause === 'object' && cause !== null) serialized.cause = safeError(cause);
  return serialized;
}
