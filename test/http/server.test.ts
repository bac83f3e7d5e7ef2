import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Sends `raw` bytes on a fresh connection and answers everything the server wrote until it closed (or 5 s passed). */
function exchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), 5000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => {
      // The server may reset the connection after answering; what it wrote is still the answer.
      if (chunks.length === 0) reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    socket.write(raw);
  });
}

function parseResponse(text: string): { status: number; headers: Record<string, string>; body: string } {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

let testApp: TestApp;
let server: Server;
let port: number;

beforeAll(async () => {
  testApp = await createTestApp();
  server = createHttpServer(testApp.app, { maxHeaderBytes: 8192, logger: createLogger('silent') });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await testApp.close();
});

describe('the HTTP server', () => {
  it('serves ordinary requests', async () => {
    const response = parseResponse(
      await exchange(port, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
    );
    expect(response.status).toBe(200);
  });

  it('answers 431 with the JSON error body when the headers are over the limit', async () => {
    const response = parseResponse(
      await exchange(port, `GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(10_000)}\r\n\r\n`),
    );
    expect(response.status).toBe(431);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers.connection).toBe('close');
    expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
    expect(JSON.parse(response.body)).toEqual({
      status: 431,
      code: 'HEADERS_TOO_LARGE',
      message: expect.stringContaining('8192 bytes'),
      requestId: expect.any(String),
    });
  });

  it('answers 431 for many small headers that are over the limit together', async () => {
    const headers = Array.from({ length: 400 }, (_, index) => `X-H${index}: ${'b'.repeat(20)}\r\n`).join('');
    const response = parseResponse(
      await exchange(port, `GET /api/internaldata/collections HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`),
    );
    expect(response.status).toBe(431);
    expect(JSON.parse(response.body).code).toBe('HEADERS_TOO_LARGE');
  });

  it('answers 431 to a client still sending a large body, without resetting the connection under the answer', async () => {
    // Closing with the body's bytes unread made the kernel reset the connection, and the client lost the 431
    // (12 times in 20 here; found by npm run fuzz as "no response"). Now the rest is read and dropped first.
    const attempt = () =>
      new Promise<{ text: string; error?: string }>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        const chunks: Buffer[] = [];
        let error: string | undefined;
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', (problem: NodeJS.ErrnoException) => {
          error = problem.code ?? problem.message;
        });
        socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), error }));
        socket.write(
          `POST /api/scenario/import?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n`,
        );
        const piece = Buffer.alloc(65_536, 120);
        let sent = 0;
        const more = () => {
          while (sent < 4_000_000) {
            sent += piece.length;
            if (!socket.write(piece)) {
              socket.once('drain', more);
              return;
            }
          }
          socket.end();
        };
        more();
      });
    const outcomes = await Promise.all(Array.from({ length: 10 }, attempt));
    for (const { text, error } of outcomes) {
      expect(error).toBeUndefined();
      const response = parseResponse(text);
      expect(response.status).toBe(431);
      expect(JSON.parse(response.body).code).toBe('HEADERS_TOO_LARGE');
    }
  }, 30_000);

  it('answers 400 with the JSON error body for a request that is not HTTP', async () => {
    const response = parseResponse(await exchange(port, 'HELLO THERE\r\n\r\n'));
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(response.body)).toEqual({
      status: 400,
      code: 'MALFORMED_REQUEST',
      message: expect.any(String),
      requestId: expect.any(String),
    });
  });
});
