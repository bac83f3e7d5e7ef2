import type { RequestHandler } from 'express';
import { carriesBody } from './body-presence.js';
import { declaredHeaderValues, type RequestCheck } from './request-check.js';

/**
 * The Express lane's two steps of an operation's request check (request-check.ts, the fast lane's too), in the
 * order the fast lane runs them.
 */

/** Before the body parsers: body bytes of a media type the operation does not take are 415, and never parsed. */
export function checkMediaType(check: RequestCheck): RequestHandler {
  return (request, _response, next) => {
    check.checkMediaType(request.method, request.path, request.headers['content-type'], carriesBody(request.headers));
    next();
  };
}

/**
 * After the body parsers and the readers of `context` and map parameters, in front of the handler: the parameters
 * coerced (and given their defaults) where the handler reads them, then 400 naming the first problem of the
 * parameters and the first of the body.
 */
export function validateRequest(check: RequestCheck): RequestHandler {
  return (request, _response, next) => {
    // Express 5 computes `request.query` on each read (with the one parser, query-string.ts): the checked object is
    // made an own property, so the handler reads what was checked.
    const query = request.query as Record<string, unknown>;
    const headers = declaredHeaderValues(check, request.headers);
    check.check(query, request.params, headers, request.body, request.headers['content-type']);
    Object.defineProperty(request, 'query', { value: query, writable: true, configurable: true, enumerable: true });
    // The declared headers as checked (coerced, defaults written in), where the Express adapter reads them.
    Object.assign(request.headers, headers);
    next();
  };
}
