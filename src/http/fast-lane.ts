import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { RouteDefinition } from '../../generated/routes.js';
import { authenticateScoreToken } from '../auth/authenticate.js';
import type { UserService } from '../auth/user-service.js';
import { errorHeaders } from '../errors/error-handler.js';
import { toApiErrorBody } from './error-body.js';
import { assertNestingWithin } from './nesting-depth.js';
import { replyHeaders, type AnyOperationHandler, type WireReply } from './operation-handler.js';
import { operationShape } from './operation-shape.js';
import { carriesBody } from './body-presence.js';
import { readJsonBody } from './json-body.js';
import { requestIdOf } from './request-context.js';
import type { OpenApiDocument, ResponseCheck } from './operation-validator.js';
import { parseQueryString } from './query-string.js';
import { declaredHeaderValues, type RequestCheck } from './request-check.js';
import { createOperationMatcher } from './route-matching.js';

/**
 * The fast lane serves the execution hot paths (synchronous scoring, async submission and result, batch status) on
 * Node's request listener, before Express: Express's own per-request work cost more than a whole score (measured in
 * docs/benchmarks.md). It runs the one request pipeline (docs/adr/0014-one-request-pipeline.md) in the order Express
 * runs it, with the same functions: a request id and one access-log line; the score token checked first (401 whatever
 * else is wrong); the one query parser (query-string.ts); the operation's compiled request check (request-check.ts:
 * 415 before the body is read, no body bytes is no body, then parameters and body against the spec, 400 naming the
 * field); the one JSON body reader (json-body.ts: 413, 400 MALFORMED_BODY) and nesting-depth limit (400); errors
 * through the one mapping of src/errors; and, when VALIDATE_RESPONSES is on, every response checked against the spec
 * (one that breaks it is logged and becomes a 500). It runs the same typed handlers as Express
 * (src/http/operation-handler.ts) and sends their reply as JSON. It recognises its operations with the service's one
 * route-matching rule (src/http/route-matching.ts); a request it does not serve (or whose path parameter has a
 * malformed escape) goes to Express untouched. `SCORE_FAST_LANE=false` turns it off.
 */

interface FastLaneOperation {
  /** The operation served; it must take a score token and answer JSON only. */
  route: RouteDefinition;
  handle: AnyOperationHandler;
}

export interface FastLaneOptions {
  spec: OpenApiDocument;
  operations: FastLaneOperation[];
  logger: Logger;
  users: UserService;
  /** Every operation's request check, by operationId: the ones Express runs (compileRequestChecks). */
  requestChecks: ReadonlyMap<string, RequestCheck>;
  bodyLimitBytes: number;
  /** Deepest nesting of the body (LIMIT_BODY_DEPTH); deeper is 400 NESTING_TOO_DEEP, before validation. */
  bodyDepthLimit: number;
  /** Checks of responses by operationId (VALIDATE_RESPONSES): one that breaks the spec is logged and becomes a 500. */
  responseChecks?: Map<string, ResponseCheck>;
}

/** Serves requests to the lane's operations and answers true; answers false (untouched) for any other request. */
export type FastLane = (request: IncomingMessage, response: ServerResponse) => boolean;

interface LaneOperation extends FastLaneOperation {
  check: RequestCheck;
  checkResponse?: ResponseCheck;
}

/** What one request's log line reports. */
interface RequestLog {
  requestId: string;
  started: bigint;
  user?: string;
  route: RouteDefinition;
}

function compileOperation(options: FastLaneOptions, operation: FastLaneOperation): LaneOperation {
  const { route } = operation;
  if (!route.security.some((scheme) => scheme === 'scoreTokenQuery' || scheme === 'scoreTokenHeader'))
    throw new Error(`the fast lane serves score-token operations, not ${route.operationId}`);
  const shape = operationShape(options.spec, route.operationId);
  if (shape.replyMediaTypes.some((mediaType) => mediaType !== 'application/json'))
    throw new Error(
      `the fast lane answers JSON only, and ${route.operationId} answers ${shape.replyMediaTypes.join(', ')}`,
    );
  const check = options.requestChecks.get(route.operationId);
  if (!check) throw new Error(`no request check for ${route.operationId}`);
  return {
    route,
    handle: operation.handle,
    check,
    checkResponse: options.responseChecks?.get(route.operationId),
  };
}

/** Path parameters decoded; undefined when an escape is malformed (Express then answers). */
function decodeParams(raw: Record<string, string>): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  try {
    for (const [name, value] of Object.entries(raw)) params[name] = decodeURIComponent(value);
  } catch {
    return undefined;
  }
  return params;
}

export function createFastLane(options: FastLaneOptions): FastLane {
  const { logger } = options;
  const operations = new Map(
    options.operations.map((operation) => [operation.route, compileOperation(options, operation)]),
  );
  // The same matching rule as Express (src/http/route-matching.ts): what the lane declines, Express serves or answers 404.
  const matchOperation = createOperationMatcher(options.operations.map((operation) => operation.route));

  async function serve(
    request: IncomingMessage,
    operation: LaneOperation,
    params: Record<string, string>,
    log: RequestLog,
    pathname: string,
    queryString: string,
  ): Promise<WireReply> {
    const { check } = operation;
    const user = await authenticateScoreToken(options.users, request.headers, request.url ?? '', operation.route);
    log.user = user.username;
    const query = parseQueryString(queryString);
    // An operation that declares no body (the async result) ignores one, whatever its type or size.
    const hasBody = check.takesBody && carriesBody(request.headers);
    const contentType = hasBody ? request.headers['content-type'] : undefined;
    if (!hasBody) request.resume();
    else {
      try {
        check.checkMediaType(request.method ?? '', pathname, contentType, true);
      } catch (error) {
        request.resume();
        throw error;
      }
    }
    const body = hasBody ? await readJsonBody(request, options.bodyLimitBytes) : undefined;
    assertNestingWithin(body, options.bodyDepthLimit);
    const headers = declaredHeaderValues(check, request.headers);
    check.check(query, params, headers, body, contentType);
    // Checked above: the handler's types hold from here on. Its operation answers JSON only: nothing to negotiate.
    const typed = {
      user,
      requestId: log.requestId,
      params,
      query,
      headers,
      body,
      accepts: firstMediaType,
    };
    return operation.handle(typed as never);
  }

  function reply(
    response: ServerResponse,
    operation: LaneOperation,
    log: RequestLog,
    outcome: WireReply,
    error?: unknown,
  ): void {
    const { requestId, user, route } = log;
    let { status, body } = outcome;
    const problem = operation.checkResponse?.(status, body);
    if (problem) {
      status = 500;
      body = { status: 500, code: 'INTERNAL_ERROR', message: problem, requestId };
    }
    const text = JSON.stringify(body);
    response.writeHead(status, {
      ...replyHeaders(outcome),
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      'X-Request-Id': requestId,
    });
    response.end(text);
    const durationMs = Number(process.hrtime.bigint() - log.started) / 1e6;
    if (status === 503)
      logger.warn(
        { requestId, method: route.method.toUpperCase(), path: route.path, status, durationMs, user },
        'request refused: dependency unavailable',
      );
    else if (status >= 500)
      logger.error(
        {
          requestId,
          err: error ?? problem,
          method: route.method.toUpperCase(),
          path: route.path,
          status,
          durationMs,
          user,
        },
        'request failed',
      );
    else
      logger.info(
        { requestId, method: route.method.toUpperCase(), path: route.path, status, durationMs, user },
        'request',
      );
  }

  return (request, response) => {
    const url = request.url ?? '';
    const mark = url.indexOf('?');
    const pathname = mark < 0 ? url : url.slice(0, mark);
    const matched = matchOperation(request.method ?? '', pathname);
    const operation = matched && operations.get(matched.route);
    const params = matched && decodeParams(matched.rawParams);
    if (!operation || !params) return false;
    const served = operation;
    const log: RequestLog = {
      requestId: requestIdOf(request.headers),
      started: process.hrtime.bigint(),
      route: served.route,
    };
    serve(request, served, params, log, pathname, mark < 0 ? '' : url.slice(mark + 1)).then(
      (outcome) => reply(response, served, log, outcome),
      (error: unknown) => {
        const body = toApiErrorBody(error);
        body.requestId = log.requestId;
        if (body.details === undefined) delete body.details;
        reply(response, served, log, { status: body.status, headers: errorHeaders(body), body }, error);
      },
    );
    return true;
  };
}

/** Content negotiation on the lane: its operations answer JSON only, the first (only) type offered. */
function firstMediaType(mediaTypes: string[]): string | false {
  return mediaTypes[0] ?? false;
}
