import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';

/**
 * Whether a request carries body bytes: no bytes is no body, whatever its Content-Type, on both lanes. Clients send
 * a Content-Type with an empty body all the time (axios posts `undefined` as `application/x-www-form-urlencoded`
 * with `Content-Length: 0`), and an operation whose body is optional must take that as no body, not a 415.
 */
export function carriesBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

/** Express lane, before the parsers and the validator: a request without body bytes has no Content-Type to judge. */
export const noBytesNoBody: RequestHandler = (request, _response, next) => {
  if (!carriesBody(request.headers)) delete request.headers['content-type'];
  next();
};
