import http, { type IncomingHttpHeaders } from 'node:http';
import type { FuzzRequest } from './fuzz-requests.js';
import { renderBody } from './hostile-values.js';

/** Sends fuzz requests as they are (raw paths, any bytes in the body) over real HTTP connections. */

export interface FuzzResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Set when no complete response came back (connection reset, timeout). */
  error?: string;
  durationMs: number;
}

export class FuzzClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly timeoutMs = 30_000,
  ) {}

  send(request: FuzzRequest): Promise<FuzzResponse> {
    const started = Date.now();
    const body = request.body ? renderBody(request.body) : undefined;
    const headers: Record<string, string | number> = { ...request.headers };
    if (body) headers['content-length'] = body.length;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (response: Omit<FuzzResponse, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        resolve({ ...response, durationMs: Date.now() - started });
      };
      let outgoing: http.ClientRequest;
      try {
        outgoing = http.request(
          {
            host: this.host,
            port: this.port,
            method: request.method,
            path: `${request.path}${request.query ? `?${request.query}` : ''}`,
            headers,
            agent: this.agent,
            timeout: this.timeoutMs,
          },
          (incoming) => {
            const chunks: Buffer[] = [];
            incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
            incoming.on('end', () =>
              finish({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks) }),
            );
            incoming.on('error', (error) =>
              finish({
                status: incoming.statusCode ?? 0,
                headers: incoming.headers,
                body: Buffer.concat(chunks),
                error: `response cut: ${error.message}`,
              }),
            );
          },
        );
      } catch (error) {
        // The request could not even be written (Node refuses some paths and header values): a generator bug.
        finish({ status: 0, headers: {}, body: Buffer.alloc(0), error: `not sendable: ${(error as Error).message}` });
        return;
      }
      outgoing.on('timeout', () => {
        outgoing.destroy(new Error(`no response within ${this.timeoutMs} ms`));
      });
      // A server may answer (413, 401) before it has read a large body and then close the connection:
      // the answer counts, a write error after it does not.
      outgoing.on('error', (error) =>
        setTimeout(() => finish({ status: 0, headers: {}, body: Buffer.alloc(0), error: error.message }), 50),
      );
      outgoing.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
