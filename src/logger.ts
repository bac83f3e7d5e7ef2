import { pino, type Logger } from 'pino';

/** Structured JSON logs on stdout. Secrets (tokens, authorization headers) are redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'scenario-scoring' },
    redact: { paths: ['*.authorization', '*.scoreToken', '*.key', '*["score-token"]', 'req.headers.authorization'], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
