import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { Logger } from 'pino';
import type { MetricsConfig } from '../config/config.js';
import { databaseOutageBody } from '../db/database-outage.js';
import { errorHeaders, toErrorBody } from '../errors/error-handler.js';
import { MethodNotAllowedError } from '../errors/method-not-allowed-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import { listen } from '../net/listen.js';
import { timeOrderedId } from '../ids/time-ordered-id.js';
import type { MetricsExposition } from './metrics.js';

export interface MetricsServerOptions {
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token?: string;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares digests, so neither the token's content nor its length leaks through timing. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(header ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(token));
}

/** An error as the API answers one: the JSON error body with a request id (also in X-Request-Id); anything but an AppError or MySQL's outage (503) is a 500. */
function sendError(response: http.ServerResponse, error: unknown, headers: Record<string, string> = {}): void {
  const body = toErrorBody(error, [databaseOutageBody]);
  body.requestId = timeOrderedId();
  if (body.details === undefined) delete body.details;
  response
    .writeHead(body.status, {
      'content-type': 'application/json',
      'x-request-id': body.requestId,
      ...errorHeaders(body, error),
      ...headers,
    })
    .end(JSON.stringify(body));
}

/**
 * The metrics listener: `GET /metrics` in Prometheus's text format, and nothing else. It is not an
 * API operation (no spec entry, no API credentials): it runs on a port of its own (METRICS_PORT,
 * WORKER_METRICS_PORT), bound to METRICS_HOST (loopback by default), because its labels name
 * every tenant's scenarios. With METRICS_TOKEN set a scrape needs that bearer token (401 otherwise).
 */
export function createMetricsServer(
  exposition: MetricsExposition,
  options: MetricsServerOptions,
  logger: Logger,
): http.Server {
  return http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') {
      sendError(
        response,
        new NotFoundError(`No route ${request.method} ${path}; metrics are at GET /metrics.`, 'ROUTE_NOT_FOUND'),
      );
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      sendError(response, new MethodNotAllowedError('Metrics are read with GET.', 'GET, HEAD'));
      return;
    }
    if (options.token !== undefined && !bearerMatches(request.headers.authorization, options.token)) {
      sendError(response, new UnauthorizedError('Scraping the metrics needs the bearer token of METRICS_TOKEN.'), {
        'www-authenticate': 'Bearer',
      });
      return;
    }
    exposition.render().then(
      (text) => {
        response.writeHead(200, { 'content-type': exposition.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'rendering the metrics failed');
        sendError(response, error);
      },
    );
  });
}

/**
 * Serves the metrics of this process on `port` at METRICS_HOST (the API: METRICS_PORT; a worker
 * process: WORKER_METRICS_PORT). Rejects with one actionable line when the port cannot be taken.
 */
export async function startMetricsServer(
  exposition: MetricsExposition,
  config: MetricsConfig,
  port: number,
  variable: string,
  logger: Logger,
): Promise<http.Server> {
  const server = createMetricsServer(exposition, { token: config.token }, logger);
  await listen(server, port, { host: config.host, variable });
  server.on('error', (error) => logger.error({ err: error }, 'metrics server error'));
  logger.info({ host: config.host, port, tokenRequired: config.token !== undefined }, 'serving metrics at /metrics');
  return server;
}
