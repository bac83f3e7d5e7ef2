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

/** Express lane, before the parsers: a request without body bytes has no Content-Type to judge (as the fast lane reads none). */
export const noBytesNoBody: RequestHandler = (request, _response, next) => {
  if (!carriesBody(request.headers)) delete request.headers['content-type'];
  next();
};

const SEMICOLON = 59;
const SPACE = 32;
const TAB = 9;

/**
 * The media type of a Content-Type header, lower-cased, without its parameters (`Application/JSON; charset=utf-8`
 * is `application/json`); undefined without one. Character codes, no regular expression: the fast lane calls it on
 * every request, and a header already in lower case without parameters (what clients send) is returned as it is.
 */
export function mediaTypeOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  let end = header.length;
  for (let at = 0; at < header.length; at++) {
    if (header.charCodeAt(at) === SEMICOLON) {
      end = at;
      break;
    }
  }
  while (end > 0 && (header.charCodeAt(end - 1) === SPACE || header.charCodeAt(end - 1) === TAB)) end--;
  let start = 0;
  while (start < end && (header.charCodeAt(start) === SPACE || header.charCodeAt(start) === TAB)) start++;
  const type = start === 0 && end === header.length ? header : header.slice(start, end);
  for (let at = 0; at < type.length; at++) {
    const code = type.charCodeAt(at);
    if (code >= 65 && code <= 90) return type.toLowerCase();
  }
  return type;
}
