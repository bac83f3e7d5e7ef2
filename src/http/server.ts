import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { timeOrderedId } from '../ids/time-ordered-id.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { toApiErrorBody } from './error-body.js';
import { HeadersTooLargeError } from '../errors/headers-too-large-error.js';
import { RequestTimeoutError } from '../errors/request-timeout-error.js';

export interface HttpServerOptions {
  /** Largest request line plus headers (LIMIT_HEADER_BYTES); Node answers larger requests through `clientError`. */
  maxHeaderBytes: number;
  logger: Logger;
}

/** What a request Node's HTTP parser refused gets: the API's error, never Node's bare status line. */
function clientErrorOf(error: NodeJS.ErrnoException, maxHeaderBytes: number): Error {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return new HeadersTooLargeError(
      `The request line and headers are larger than the ${maxHeaderBytes} bytes this server accepts.`,
    );
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new RequestTimeoutError('The request headers did not arrive in time.');
  return new BadRequestError(
    `The request is not well-formed HTTP (${error.code ?? 'parse error'}).`,
    'MALFORMED_REQUEST',
  );
}

/**
 * The service's HTTP server. Requests that Node's parser refuses never reach the request listener
 * (so neither Express nor its error handler); by default Node then writes a bare status line.
 * Here they get the API's JSON error body: 431 HEADERS_TOO_LARGE past `maxHeaderBytes`, 408
 * REQUEST_TIMEOUT, or 400 MALFORMED_REQUEST for anything that is not HTTP; the connection closes once the client
 * has stopped sending (lingerThenClose).
 */
export function createHttpServer(listener: RequestListener, options: HttpServerOptions): Server {
  const server = createServer({ maxHeaderSize: options.maxHeaderBytes }, listener);
  /** Connections answered here, kept open while the client still sends (lingerThenClose). */
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Every further chunk the client sends fails the parser again: the connection was answered and is lingering.
    if (answered.has(socket)) return;
    // Nothing can be answered on a connection the client reset, or once a response has started on it.
    const started =
      (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (error.code === 'ECONNRESET' || !socket.writable || started) {
      socket.destroy();
      return;
    }
    const body = toApiErrorBody(clientErrorOf(error, options.maxHeaderBytes));
    body.requestId = timeOrderedId();
    delete body.details;
    options.logger.info(
      { requestId: body.requestId, status: body.status, code: body.code, parserError: error.code },
      'request refused by the HTTP parser',
    );
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${body.status} ${STATUS_CODES[body.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nX-Request-Id: ${body.requestId}\r\nConnection: close\r\n\r\n${text}`,
    );
    answered.add(socket);
    lingerThenClose(socket);
  });
  return server;
}

/** How long a refused connection is read (and what arrives dropped) after its answer, at most. */
const LINGER_MS = 2000;

/**
 * After the answer to a request the parser refused, reads and drops what the client still sends (the rest of a
 * large body), until it stops or LINGER_MS pass, then closes. Closing with unread bytes makes the kernel reset the
 * connection, and a client still sending then loses the answer it was sent: a 431 to a request with a 20 KB URL and
 * a 4 MB body reached the client 12 times in 20 (found by npm run fuzz as a request with no response).
 */
function lingerThenClose(socket: Duplex): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('end', () => socket.destroy());
  socket.once('close', () => clearTimeout(timer));
  socket.resume();
}
