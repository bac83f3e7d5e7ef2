import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import axios from 'axios';
import type { HttpPort, HttpRequest, HttpResponse } from '../ports.js';
import { TargetPolicy } from './target-policy.js';

const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

/**
 * Default HTTP port: every URL goes through the target policy; connections are pinned to addresses the policy
 * approved (the agent's lookup re-checks them, so DNS rebinding cannot slip a private address in), and
 * redirects are not followed (a 3xx is returned as the response).
 */
export function createHttpPort(policy: TargetPolicy): HttpPort {
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
  const httpAgent = new http.Agent({ lookup: guardedLookup, keepAlive: true });
  const httpsAgent = new https.Agent({ lookup: guardedLookup, keepAlive: true });
  const client = axios.create({
    httpAgent, httpsAgent, maxRedirects: 0, validateStatus: () => true, proxy: false,
    maxContentLength: MAX_RESPONSE_BYTES, maxBodyLength: MAX_RESPONSE_BYTES, responseType: 'json',
    transitional: { silentJSONParsing: true, forcedJSONParsing: true, clarifyTimeoutError: true },
  });
  return {
    async request(req: HttpRequest): Promise<HttpResponse> {
      await policy.check(req.url);
      try {
        const response = await client.request({
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
    },
  };
}
