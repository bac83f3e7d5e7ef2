import { pino, type Logger } from 'pino';
import { safeErrorReason } from './db/mysql-errors.js';

/** Properties of driver errors that hold what a statement carried (its SQL, its values). */
const STATEMENT_FIELDS = ['sql', 'bindings', 'parameters', 'values'];

/**
 * Structured JSON logs on stdout. Secrets (tokens, authorization headers) are redacted. Lines are
 * written asynchronously in 4 KiB batches (one write per request costs a tenth of a score); call
 * `logger.flush()` before exiting. Logged errors never carry a statement (safeError). Tests may pass
 * another `destination` to read the lines.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination({ dest: 1, sync: false, minLength: 4096 })): Logger {
  return pino({
    level,
    base: { service: 'scenario-scoring' },
    redact: { paths: ['*.authorization', '*.scoreToken', '*.key', '*["score-token"]', 'req.headers.authorization'], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: safeError },
  }, destination);
}

/**
 * pino's error serializer, without what a statement carried: a query error's message (and the stack's
 * first line) start with its whole SQL, inputs and results included, and mysql2 adds it as `sql` too. A
 * failing write of a replay's report logged a line of 57 MB every 31 s (issue 27, problem 2). The
 * message becomes safeErrorReason's (code and server message; other messages cut to 1,000 characters).
 */
export function safeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (typeof error !== 'object' || error === null || typeof serialized !== 'object' || serialized === null) return serialized;
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
