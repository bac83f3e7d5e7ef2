import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type RequestListener,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Requests sent exactly as written (no client-side normalisation of `..`, `//`, escapes or methods
 * such as HEAD), against the app on a real listener: for the tests of routing and of HTTP itself.
 */

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text ('' when there is none). */
  text: string;
}

/** The app on a listener of its own (127.0.0.1, a free port); close it with `closeServer`. */
export async function listenOnFreePort(app: RequestListener): Promise<Server> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Sends the request as given, with `body` when there is one, and reads the whole answer. */
export function sendRaw(
  server: Server,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
