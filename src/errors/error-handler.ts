import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { components } from '../../generated/api-types.js';
import { AppError } from './app-error.js';
import { MethodNotAllowedError } from './method-not-allowed-error.js';
import type { ErrorCode } from './error-codes.js';
import { NotFoundError } from './not-found-error.js';
import { UnsupportedMediaTypeError } from './unsupported-media-type-error.js';
import { explainValidatorErrors, type ValidatorErrorItem } from './validator-error-details.js';

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

/** Errors thrown by express-openapi-validator, body-parser and multer carry these fields. */
interface ForeignHttpError extends Error {
  status?: number;
  statusCode?: number;
  type?: string;
  code?: string;
  field?: string;
  errors?: ValidatorErrorItem[];
}

const VALIDATOR_CODES: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  406: 'NOT_ACCEPTABLE',
};

/** Turns a request path such as `/body/scenarioName` into the field name users wrote: `scenarioName` (in body). */
function describeValidatorPath(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const [, location, ...rest] = path.split('/');
  const field = rest.join('.');
  if (!location) return path;
  return field ? `${location}.${field}` : location;
}

function fromForeignError(error: ForeignHttpError): ErrorBody | undefined {
  if (error.type === 'entity.parse.failed') {
    return { status: 400, code: 'MALFORMED_BODY', message: `The request body is not valid JSON: ${error.message}` };
  }
  // multer: sizes and counts of files and parts are 413 (as express-openapi-validator answers them).
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
  const status = error.status ?? error.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  const details = explainValidatorErrors(error.errors ?? []).map((item) => ({
    path: describeValidatorPath(item.path),
    message: item.message ?? 'invalid',
  }));
  const summary =
    details.length > 0
      ? details.map((detail) => (detail.path ? `${detail.path} ${detail.message}` : detail.message)).join('; ')
      : error.message;
  return {
    status,
    code: VALIDATOR_CODES[status] ?? 'VALIDATION_FAILED',
    message: status === 404 ? 'No such route.' : summary,
    details: details.length > 0 ? details : undefined,
  };
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

/** What the validator leaves on a request it matched to an operation. */
type ValidatedRequest = Request & { openapi?: { schema?: { requestBody?: { content?: Record<string, unknown> } } } };

/**
 * The validator's "no such path" (404), "not this method" (405) and "not this content type" (415)
 * carry the path in its own dotted form and no method: told again here with the request's method and
 * path as sent, and what the path takes (methods; media types). Any other error is returned as it is.
 */
function routingError(error: unknown, request: ValidatedRequest): unknown {
  if (error instanceof AppError || !(error instanceof Error)) return error;
  const { status, headers } = error as ForeignHttpError & { headers?: Record<string, string> };
  const route = `${request.method} ${request.path}`;
  if (status === 404) return new NotFoundError(`No route ${route}.`, 'ROUTE_NOT_FOUND');
  if (status === 405) {
    const allow = headers?.Allow ?? '';
    return new MethodNotAllowedError(
      `${request.method} is not allowed on ${request.path}${allow ? `; it takes ${allow}` : ''}.`,
      allow,
    );
  }
  if (status === 415) {
    const takes = Object.keys(request.openapi?.schema?.requestBody?.content ?? {});
    const sent = request.headers['content-type'];
    return new UnsupportedMediaTypeError(
      `${route} takes ${takes.length > 0 ? takes.join(', ') : 'another media type'}; the request's Content-Type is ${sent ? `"${sent}"` : 'missing'}.`,
    );
  }
  return error;
}

function requestIdOf(request: Request): string | undefined {
  return (request as Request & { id?: string }).id;
}

/** The only place that turns errors into responses; `translators` as toErrorBody takes them. */
export function createErrorHandler(translators: readonly ErrorTranslator[] = []): ErrorRequestHandler {
  return (thrown, request, response, next) => {
    if (response.headersSent) {
      next(thrown);
      return;
    }
    const error = routingError(thrown, request);
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

export const unknownRouteHandler: RequestHandler = (request, _response, next) => {
  next(new NotFoundError(`No route ${request.method} ${request.path}.`, 'ROUTE_NOT_FOUND'));
};
