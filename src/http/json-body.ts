import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { BadRequestError } from '../errors/bad-request-error.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { UnsupportedMediaTypeError } from '../errors/unsupported-media-type-error.js';
import { carriesBody, mediaTypeOf } from './body-presence.js';

/**
 * The one reader of JSON bodies, on both lanes (the fast lane calls readJsonBody, Express runs jsonBody): so a body
 * means the same on every operation.
 * - Up to the limit (413 past it: at once when Content-Length says so, else when the bytes pass it).
 * - Sent as it is: a Content-Encoding other than `identity` is 415 (no operation takes a compressed body), and so is
 *   a charset other than UTF-8 (JSON is UTF-8: RFC 8259).
 * - No bytes is no body (undefined), whatever the Content-Type (body-presence.ts).
 * - An object or an array (every JSON body of the spec is one): anything else, or text that is no JSON, is 400
 *   MALFORMED_BODY with the parser's words.
 */

const TOO_LARGE = 'The request body is larger than this server accepts.';
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;

export function readJsonBody(request: IncomingMessage, limitBytes: number): Promise<unknown> {
  const refusal = refusalBeforeReading(request, limitBytes);
  if (refusal) {
    request.resume();
    return Promise.reject(refusal);
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
        reject(new PayloadTooLargeError(TOO_LARGE));
        return;
      }
      chunks.push(chunk);
    });
    request.on('error', () => reject(new BadRequestError('The request body was not received in full.')));
    request.on('end', () => {
      if (refused) return;
      if (size === 0) {
        resolve(undefined);
        return;
      }
      try {
        resolve(parseJsonBody(Buffer.concat(chunks, size).toString('utf8')));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** What is refused from the headers alone: a declared size past the limit, a compressed body, a charset not UTF-8. */
function refusalBeforeReading(request: IncomingMessage, limitBytes: number): Error | undefined {
  if (Number(request.headers['content-length'] ?? 0) > limitBytes) return new PayloadTooLargeError(TOO_LARGE);
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
    return new UnsupportedMediaTypeError(`Send the body uncompressed: Content-Encoding "${encoding}" is not taken.`);
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset))
    return new UnsupportedMediaTypeError(`Send JSON as UTF-8: the charset "${charset}" is not taken.`);
  return undefined;
}

/** The body's text as an object or an array; 400 MALFORMED_BODY for anything else. */
function parseJsonBody(text: string): unknown {
  let first = 0;
  while (first < text.length && text.charCodeAt(first) <= 32) first++;
  const opening = text.charCodeAt(first);
  if (opening !== OPEN_BRACE && opening !== OPEN_BRACKET)
    throw new BadRequestError(
      'The request body is not valid JSON: a body must be a JSON object or array.',
      'MALFORMED_BODY',
    );
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new BadRequestError(`The request body is not valid JSON: ${(error as Error).message}`, 'MALFORMED_BODY');
  }
}

/** Whether a Content-Type names JSON (`application/json`, or a `+json` type). */
function isJsonType(contentType: string | undefined): boolean {
  const mediaType = mediaTypeOf(contentType);
  return (
    mediaType === 'application/json' || (mediaType?.startsWith('application/') === true && mediaType.endsWith('+json'))
  );
}

/** Express lane: the JSON body of a request that carries one, read by readJsonBody into `request.body`. */
export function jsonBody(limitBytes: number): RequestHandler {
  return (request, _response, next) => {
    if (!carriesBody(request.headers) || !isJsonType(request.headers['content-type'])) {
      next();
      return;
    }
    readJsonBody(request, limitBytes).then((body) => {
      request.body = body;
      next();
    }, next);
  };
}
