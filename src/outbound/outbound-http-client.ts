import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import axios, { type AxiosInstance } from 'axios';
import type { HttpPort } from '../engine/ports.js';
import type { TargetPolicy } from './target-policy.js';

const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

/**
 * How long a kept-alive connection may sit idle in the pool before this client closes it: below the 5 s
 * after which common servers close idle connections (Node's http server `keepAliveTimeout`, 5 s;
 * nginx `keepalive_timeout` 75 s; many load balancers more). Without it a connection reused just as
 * the server closes it fails with "socket hang up" / ECONNRESET (issue 27, problem 9). A server that
 * announces a shorter `Keep-Alive: timeout=N` gets N − 1 s (Node's agent reads the hint, but only
 * when the agent has a timeout of its own).
 */
export const IDLE_SOCKET_TIMEOUT_MS = 4000;

export interface OutboundRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
}
export interface OutboundResponse {
  status: number;
  body: unknown;
}

/**
 * The service's only HTTP client for calls it makes on a user's behalf: HTTP_CALL nodes (as the
 * engine's HttpPort) and execution callbacks. Every URL goes through the target policy; connections
 * are pinned to addresses the policy approved (the agents' lookup re-checks them, so DNS rebinding
 * cannot slip a private address in), and redirects are not followed (a 3xx is the response).
 * Built once per process in the composition root (src/services.ts).
 */
export class OutboundHttpClient implements HttpPort {
  private readonly client: AxiosInstance;

  constructor(private readonly policy: TargetPolicy) {
    const guardedLookup: LookupFunction = (hostname, options, callback) => {
      policy.check(`http://${hostname.includes(':') ? `[${hostname}]` : hostname}/`).then(
        (addresses) => {
          const family = addresses[0].includes(':') ? 6 : 4;
          if ((options as { all?: boolean }).all)
            (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(
              null,
              addresses.map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 })),
            );
          else callback(null, addresses[0], family);
        },
        (error: Error) =>
          callback(Object.assign(error, { code: 'HTTP_TARGET_REFUSED' }) as NodeJS.ErrnoException, '', 4),
      );
    };
    this.client = axios.create({
      httpAgent: new http.Agent({ lookup: guardedLookup, keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS }),
      httpsAgent: new https.Agent({ lookup: guardedLookup, keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS }),
      maxRedirects: 0,
      validateStatus: () => true,
      proxy: false,
      maxContentLength: MAX_RESPONSE_BYTES,
      maxBodyLength: MAX_RESPONSE_BYTES,
      responseType: 'json',
      transitional: { silentJSONParsing: true, forcedJSONParsing: true, clarifyTimeoutError: true },
    });
  }

  /**
   * Sends one request; a refused target rejects with code HTTP_TARGET_REFUSED, any other failure with a
   * message naming the call. A request that failed on a kept-alive connection the server had closed
   * meanwhile (isStaleConnectionFailure) is sent again at once, once, on a new connection: it never
   * reached the server, so it is not an attempt of the caller's (a callback spends none of its retries).
   */
  async request(req: OutboundRequest): Promise<OutboundResponse> {
    await this.policy.check(req.url);
    try {
      let response: Awaited<ReturnType<OutboundHttpClient['send']>>;
      try {
        response = await this.send(req);
      } catch (error) {
        if (!isStaleConnectionFailure(error)) throw error;
        response = await this.send(req);
      }
      return { status: response.status, body: response.data === '' ? null : response.data };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      if ((error as { code?: string }).code === 'HTTP_TARGET_REFUSED' || cause?.code === 'HTTP_TARGET_REFUSED') {
        throw Object.assign(new Error((error as Error).message), { code: 'HTTP_TARGET_REFUSED' });
      }
      throw new Error(`${req.method} ${req.url} failed: ${(error as Error).message}`);
    }
  }

  private send(req: OutboundRequest) {
    return this.client.request({
      method: req.method,
      url: req.url,
      headers: req.headers,
      data: req.body,
      timeout: req.timeoutMs,
    });
  }
}

/**
 * The request went out on a reused kept-alive connection and the connection broke before any answer
 * (ECONNRESET, EPIPE, or "socket hang up"): the server had closed that idle connection as the request
 * was written, and never read it. Node's documentation recommends retrying exactly this case
 * (`request.reusedSocket`). A failure on a new connection, or after an answer began, is the call's outcome.
 */
function isStaleConnectionFailure(error: unknown): boolean {
  const { request, response, code, message } = (error ?? {}) as {
    request?: { reusedSocket?: boolean };
    response?: unknown;
    code?: unknown;
    message?: unknown;
  };
  if (request?.reusedSocket !== true || response !== undefined) return false;
  return code === 'ECONNRESET' || code === 'EPIPE' || message === 'socket hang up';
}
