import type { ErrorRequestHandler, RequestHandler } from 'express';
import { validatorContentType } from './validator-content-type.js';

/**
 * HEAD is served by every GET operation (RFC 9110 §9.3.2: the same status and headers, no body), as
 * Express routes it. The spec lists GET only, so express-openapi-validator would answer a HEAD with
 * 405: these handlers let the validator check a HEAD as the GET it stands for, then put the method
 * back, so that the route's answer goes out without its body (Node leaves the body out of a reply to
 * HEAD whatever the method reads later; the method is restored for the handlers and the logs).
 * The validator is also shown the request's Content-Type without the parameters it would compile a validator
 * for each of (validator-content-type.ts); the header as sent is put back after it, for the handlers and the 415.
 */
export function validatedAsGet(validator: RequestHandler[]): Array<RequestHandler | ErrorRequestHandler> {
  const asGet: RequestHandler = (request, _response, next) => {
    if (request.method === 'HEAD') {
      request.method = 'GET';
      (request as HeadMarked)[WAS_HEAD] = true;
    }
    const sent = request.headers['content-type'];
    if (typeof sent === 'string') {
      (request as HeadMarked)[SENT_CONTENT_TYPE] = sent;
      request.headers['content-type'] = validatorContentType(sent);
    }
    next();
  };
  const restore = (request: HeadMarked & { method: string; headers: Record<string, unknown> }) => {
    if (request[WAS_HEAD]) request.method = 'HEAD';
    if (request[SENT_CONTENT_TYPE] !== undefined) request.headers['content-type'] = request[SENT_CONTENT_TYPE];
  };
  const backToHead: RequestHandler = (request, _response, next) => {
    restore(request);
    next();
  };
  // The validator's refusals (400, 405, …) skip to the error handlers: the method goes back on that path too.
  const backToHeadOnError: ErrorRequestHandler = (error, request, _response, next) => {
    restore(request);
    next(error);
  };
  return [asGet, ...validator, backToHead, backToHeadOnError];
}

const WAS_HEAD = Symbol('was HEAD');
const SENT_CONTENT_TYPE = Symbol('Content-Type as sent');
type HeadMarked = { [WAS_HEAD]?: boolean; [SENT_CONTENT_TYPE]?: string };
