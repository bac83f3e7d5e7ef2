import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import axios, { type AxiosInstance } from 'axios';
import type { HttpPort } from '../engine/ports.js';
import type { TargetPolicy } from './target-policy.js';

const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

export interface OutboundRequest { method: string; url: string; headers: Record<string, string>; body?: unknown; timeoutMs: number }
export interface OutboundResponse { status: number; body: unknown }

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
          if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, addresses.map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 })));
          else callback(null, addresses[0], family);
        },
        (error: Error) => callback(Object.assign(error, { code: 'HTTP_TARGET_REFUSED' }) as NodeJS.ErrnoException, '', 4),
      );
    };
    this.client = axios.create({
      httpAgent: new http.Agent({ lookup: guardedLookup, keepAlive: true }),
      httpsAgent: new https.Agent({ lookup: guardedLookup, keepAlive: true }),
      maxRedirects: 0, validateStatus: () => true, proxy: false,
      maxContentLength: MAX_RESPONSE_BYTES, maxBodyLength: MAX_RESPONSE_BYTES, responseType: 'json',
      transitional: { silentJSONParsing: true, forcedJSONParsing: true, clarifyTimeoutError: true },
    });
  }

  /** Sends one request; a refused target rejects with code HTTP_TARGET_REFUSED, any other failure with a message naming the call. */
  async request(req: OutboundRequest): Promise<OutboundResponse> {
    await this.policy.check(req.url);
    try {
      const response = await this.client.request({
        method: req.method, url: req.url, headers: req.headers, data: req.body, timeout: req.timeoutMs,
      });
      return { status: response.status, body: response.data === '' ? null : response.data };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      if ((error as { code?: string }).code === 'HTTP_TARGET_REFUSED' || cause?.code === 'HTTP_TARGET_REFUSED') {
        throw Object.assign(new Error((error as Error).message), { code: 'HTTP_TARGET_REFUSED' });
      }
      throw new Error(`${req.method} ${req.url} failed: ${(error as Error).message}`);
    }
  }
}
