import type { ErrorRequestHandler, Request } from 'express';
import type { components } from '../../generated/api-types.js';
import { AppError } from './app-error.js';
import { MethodNotAllowedError } from './method-not-allowed-error.js';
import type { ErrorCode } from './error-codes.js';

/**
 * The wire shape of every non-2xx response: the spec's `Error` schema itself, so a change to it
 * fails `tsc` here, where error bodies are made (and AppError's codes must be the spec's ErrorCode).
 */
export type ErrorBody = components['schemas']['Error'];

/**
 * Turns an error this folder does not know (a driver's outage, the engine's own errors) into its body, or answers
 * undefined. Each lives beside what it knows (src/db/database-outage.ts, src/http/engine-error-body.ts) and is
 * handed in: src/errors/ imports neither the db nor the engine.
 */
export type ErrorTranslator = (error: unknown) => ErrorBody | undefined;

/** Errors thrown by body-parser and multer carry these fields. */
interface ForeignHttpError extends Error {
  status?: number;
  statusCode?: number;
  type?: string;
  code?: string;
  field?: string;
}

const FOREIGN_CODES: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

function fromForeignError(error: ForeignHttpError): ErrorBody | undefined {
  if (error.type === 'entity.parse.failed') {
    return { status: 400, code: 'MALFORMED_BODY', message: `The request body is not valid JSON: ${error.message}` };
  }
  // multer: sizes and counts of files and parts are 413.
  if (
    error.type === 'entity.too.large' ||
    (typeof error.code === 'string' && /^LIMIT_(?:(?:FILE|PART)_(?:SIZE|COUNT)|FIELD_VALUE)$/.test(error.code))
  ) {
    return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than this server accepts.' };
  }
  if (typeof error.code === 'string' && error.code.startsWith('LIMIT_')) {
    return {
      status: 400,
      code: 'VALIDATION_FAILED',
      message: `Upload rejected: ${error.message}${error.field ? ` (field "${error.field}")` : ''}`,
    };
  }
  // body-parser's other refusals (an unsupported charset: 415; a malformed request: 400).
  const status = error.status ?? error.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  return { status, code: FOREIGN_CODES[status] ?? 'VALIDATION_FAILED', message: error.message };
}

/**
 * Seconds a client is told to wait (`Retry-After`) before sending a request again that was refused
 * with 503 because MySQL or the job store is unavailable. Both reconnect by themselves within a
 * second of their return; this leaves them room without making clients wait long.
 */
export const RETRY_AFTER_SECONDS = 5;

/** An error's body: an AppError's own, else the first translator's answer, else what a foreign HTTP error says, else 500. */
export function toErrorBody(error: unknown, translators: readonly ErrorTranslator[] = []): ErrorBody {
  if (error instanceof AppError) {
    return { status: error.status, code: error.code, message: error.message, details: error.details };
  }
  for (const translate of translators) {
    const body = translate(error);
    if (body) return body;
  }
  const foreign = error instanceof Error ? fromForeignError(error as ForeignHttpError) : undefined;
  return (
    foreign ?? {
      status: 500,
      code: 'INTERNAL_ERROR',
      message: 'The server failed to handle this request; it has been logged.',
    }
  );
}

/**
 * Headers that go with an error response: `Retry-After` on every 503 (a dependency is down; the request
 * can be sent again), `Allow` on a 405 (the methods the path takes, as RFC 9110 asks).
 */
export function errorHeaders(body: ErrorBody, error?: unknown): Record<string, string> {
  if (body.status === 503) return { 'Retry-After': String(RETRY_AFTER_SECONDS) };
  if (error instanceof MethodNotAllowedError) return { Allow: error.allow };
  return {};
}

function requestIdOf(request: Request): string | undefined {
  return (request as Request & { id?: string }).id;
}

/** The only place that turns errors into responses; `translators` as toErrorBody takes them. */
export function createErrorHandler(translators: readonly ErrorTranslator[] = []): ErrorRequestHandler {
  return (error, request, response, next) => {
    if (response.headersSent) {
      next(error);
      return;
    }
    const body = toErrorBody(error, translators);
    body.requestId = requestIdOf(request);
    // A 503 is a dependency's outage, logged once by whoever saw it go: one line per refusal, no stack.
    if (body.status === 503)
      request.log?.warn({ code: body.code, status: body.status }, 'request refused: dependency unavailable');
    else if (body.status >= 500) request.log?.error({ err: error }, 'request failed');
    else request.log?.info({ code: body.code, status: body.status }, 'request rejected');
    if (body.details === undefined) delete body.details;
    response.status(body.status).set(errorHeaders(body, error)).json(body);
  };
}
