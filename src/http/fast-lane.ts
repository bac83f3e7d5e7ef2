import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Logger } from 'pino';
import type { RouteDefinition } from '../../generated/routes.js';
import { scoreTokenFrom } from '../auth/authenticate.js';
import type { UserService } from '../auth/user-service.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { toErrorBody } from '../errors/error-handler.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import { UnsupportedMediaTypeError } from '../errors/unsupported-media-type-error.js';
import type { AuthenticatedUser } from './request-context.js';
import { assertNestingWithin } from './nesting-depth.js';
import { compileRequestCheck, compileResponseCheck, type OpenApiDocument } from './operation-validator.js';
import { createRouteMatcher } from './route-matching.js';

/**
 * The fast lane serves ONE operation (synchronous scoring, the hot path) on Node's request
 * listener, before Express: Express's own per-request work cost more than the whole score
 * (measured in docs/benchmarks.md). It keeps every rule of the Express chain: a request id and one
 * access-log line, the score token checked first (401 whatever else is wrong), the body limit (413)
 * and nesting-depth limit (400), JSON only, the spec's validation of query and body (400 naming each field), errors through the one
 * mapping of src/errors, and, in tests, every response checked against the spec.
 * `SCORE_FAST_LANE=false` turns it off: the operation then goes through Express like the others.
 */

export interface FastLaneReply {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface FastLaneOptions {
  spec: OpenApiDocument;
  /** The operation served; it must take a score token, query parameters and a JSON body, and have no path parameters. */
  route: RouteDefinition;
  logger: Logger;
  users: UserService;
  bodyLimitBytes: number;
  /** Deepest nesting of the body (LIMIT_BODY_DEPTH); deeper is 400 NESTING_TOO_DEEP, before validation. */
  bodyDepthLimit: number;
  /** Check every response against the spec (tests). */
  validateResponses?: boolean;
  handle(caller: AuthenticatedUser, query: Record<string, unknown>, body: unknown): Promise<FastLaneReply>;
}

/** Serves requests to the lane's operation and answers true; answers false (untouched) for any other request. */
export type FastLane = (request: IncomingMessage, response: ServerResponse) => boolean;

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i;

export function createFastLane(options: FastLaneOptions): FastLane {
  const { route, logger } = options;
  if (route.path.includes('{')) throw new Error(`the fast lane serves operations without path parameters, not ${route.operationId}`);
  // The same matching rule as Express (src/http/route-matching.ts): what the lane declines, Express serves or answers 404.
  const matchesRoute = createRouteMatcher([route]);
  const checkRequest = compileRequestCheck(options.spec, route.operationId);
  const checkResponse = options.validateResponses ? compileResponseCheck(options.spec, route.operationId) : undefined;

  /** What one request's log line reports. */
  interface RequestLog { requestId: string; started: bigint; user?: string }

  async function serve(request: IncomingMessage, log: RequestLog, queryString: string): Promise<FastLaneReply> {
    const token = scoreTokenFrom(request.headers, request.url ?? '', route);
    if (!token) throw new UnauthorizedError('A score token is required: send it in the Score-Token header or the `key` query parameter.', 'UNAUTHENTICATED');
    const caller = await options.users.authenticateScoreToken(token);
    if (!caller) throw new UnauthorizedError('The score token is not valid.', 'INVALID_SCORE_TOKEN');
    log.user = caller.username;
    const query = parseQuery(queryString) as Record<string, unknown>;
    const contentType = request.headers['content-type'];
    const isJson = JSON_TYPE.test(contentType ?? '');
    if (contentType && !isJson) {
      request.resume();
      throw new UnsupportedMediaTypeError(`Send the body as application/json, not ${contentType.split(';')[0]}.`);
    }
    const body = await readJsonBody(request, options.bodyLimitBytes, isJson);
    assertNestingWithin(body, options.bodyDepthLimit);
    const problems = checkRequest({ query, body, isJson });
    if (problems.length > 0) {
      throw new BadRequestError(problems.map((problem) => `${problem.path} ${problem.message}`).join('; '), 'VALIDATION_FAILED', problems);
    }
    return options.handle(caller, query, body);
  }

  function reply(response: ServerResponse, log: RequestLog, outcome: FastLaneReply, error?: unknown): void {
    const { requestId, user } = log;
    let { status, body } = outcome;
    const problem = checkResponse?.(status, body);
    if (problem) {
      status = 500;
      body = { status: 500, code: 'INTERNAL_ERROR', message: problem, requestId };
    }
    const text = JSON.stringify(body);
    response.writeHead(status, { ...outcome.headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'X-Request-Id': requestId });
    response.end(text);
    const durationMs = Number(process.hrtime.bigint() - log.started) / 1e6;
    if (status >= 500) logger.error({ requestId, err: error ?? problem, method: route.method.toUpperCase(), path: route.path, status, durationMs, user }, 'request failed');
    else logger.info({ requestId, method: route.method.toUpperCase(), path: route.path, status, durationMs, user }, 'request');
  }

  return (request, response) => {
    const url = request.url ?? '';
    const mark = url.indexOf('?');
    const pathname = mark < 0 ? url : url.slice(0, mark);
    if (!matchesRoute(request.method ?? '', pathname)) return false;
    const incoming = request.headers['x-request-id'];
    const log: RequestLog = { requestId: typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID(), started: process.hrtime.bigint() };
    serve(request, log, mark < 0 ? '' : url.slice(mark + 1)).then(
      (outcome) => reply(response, log, outcome),
      (error: unknown) => {
        const body = toErrorBody(error);
        body.requestId = log.requestId;
        if (body.details === undefined) delete body.details;
        reply(response, log, { status: body.status, body }, error);
      },
    );
    return true;
  };
}

/** Reads the body up to `limitBytes` (413 past it) and parses it when it is JSON; undefined when there is none. */
function readJsonBody(request: IncomingMessage, limitBytes: number, isJson: boolean): Promise<unknown> {
  const declared = Number(request.headers['content-length'] ?? NaN);
  if (declared > limitBytes) {
    request.resume();
    return Promise.reject(new PayloadTooLargeError('The request body is larger than this server accepts.'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > limitBytes) {
        refused = true;
        reject(new PayloadTooLargeError('The request body is larger than this server accepts.'));
        return;
      }
      chunks.push(chunk);
    });
    request.on('error', reject);
    request.on('end', () => {
      if (refused) return;
      if (size === 0) {
        // As express.json: an empty JSON body is an empty object; no body at all is no body.
        resolve(isJson ? {} : undefined);
        return;
      }
      const text = Buffer.concat(chunks, size).toString('utf8');
      if (!isJson) {
        resolve(text);
        return;
      }
      try {
        resolve(JSON.parse(text) as unknown);
      } catch (error) {
        reject(new BadRequestError(`The request body is not valid JSON: ${(error as Error).message}`, 'MALFORMED_BODY'));
      }
    });
  });
}
