import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logger.js';
import { createMetricsServer } from '../../src/metrics/metrics-server.js';
import { PrometheusMetrics } from '../../src/metrics/prometheus-metrics.js';
import { closeServices, createServices, type Services } from '../../src/services.js';
import { isolateJobStore } from '../execution/support.js';
import { sampleValue } from '../support/prometheus-text.js';
import { freePort } from '../support/private-redis.js';
import { applyTestEnvironment } from '../support/test-environment.js';

const logger = createLogger('silent');

describe('the metrics listener', () => {
  const metrics = new PrometheusMetrics({ probeTimeoutMs: 100, maxScenarioSeries: 10 }, logger);
  const open = createMetricsServer(metrics, {}, logger);
  const guarded = createMetricsServer(metrics, { token: 's3cret-metrics-token' }, logger);

  it('answers GET /metrics in Prometheus text format, and HEAD without a body', async () => {
    const response = await request(open).get('/metrics');
    expect(response.status).toBe(200);
    expect(response.text).toContain('# TYPE scoring_runs_total counter');
    const head = await request(open).head('/metrics');
    expect(head.status).toBe(200);
    expect(head.text ?? '').toBe('');
  });

  it('answers 404 ROUTE_NOT_FOUND for any other path and 405 for another method, with the JSON error body', async () => {
    const other = await request(open).get('/api/scenario/export');
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ status: 404, code: 'ROUTE_NOT_FOUND' });
    const post = await request(open).post('/metrics');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.body).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED' });
    // Like every error of the API: a request id in the body and in X-Request-Id.
    for (const response of [other, post]) {
      expect(response.body.requestId).toEqual(expect.any(String));
      expect(response.headers['x-request-id']).toBe(response.body.requestId);
    }
  });

  it('with METRICS_TOKEN, answers 401 without that bearer token or with another', async () => {
    for (const authorization of [undefined, 'Bearer wrong', 'Basic czNjcmV0', 's3cret-metrics-token']) {
      const attempt = request(guarded).get('/metrics');
      const response = await (authorization ? attempt.set('Authorization', authorization) : attempt);
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
      expect(response.headers['www-authenticate']).toBe('Bearer');
      expect(response.text).not.toContain('scoring_runs_total');
    }
    const allowed = await request(guarded).get('/metrics').set('Authorization', 'Bearer s3cret-metrics-token');
    expect(allowed.status).toBe(200);
  });

  it('reads the gauges as NaN until the stores are known', async () => {
    const text = (await request(open).get('/metrics')).text;
    expect(sampleValue(text, 'scoring_batch_elements_pending')).toBeNaN();
    expect(sampleValue(text, 'scoring_job_queue_depth')).toBeNaN();
  });
});

/** A TCP server that accepts connections and never answers: a MySQL or Redis that hangs. */
class Blackhole {
  private readonly server = net.createServer((socket) => this.sockets.add(socket.on('error', () => undefined)));
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe.each<[string, 'hanging' | 'refusing']>([
  ['hang (they accept connections and never answer)', 'hanging'],
  ['refuse connections', 'refusing'],
])('when MySQL and the job store %s', (_title, kind) => {
  const blackhole = new Blackhole();
  let services: Services;
  let knexLog: { mockRestore(): void };

  beforeAll(async () => {
    // knex logs every failed connection attempt on the console; the outage is the point here.
    knexLog = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    isolateJobStore(`metrics-outage-${kind}`);
    applyTestEnvironment();
    await blackhole.start();
    const port = kind === 'hanging' ? blackhole.port : await freePort();
    const defaults = loadConfig();
    services = await createServices(
      {
        ...defaults,
        databaseUrl: `mysql://root@127.0.0.1:${port}/scoring_test`,
        jobsUrl: `redis://127.0.0.1:${port}/0`,
        metrics: { ...defaults.metrics, enabled: true, probeTimeoutMs: 300 },
      },
      logger,
    );
  });
  afterAll(async () => {
    await blackhole.stop();
    await closeServices(services);
    knexLog.mockRestore();
  });

  it('a scrape still answers 200 at once, the gauges that need them reading NaN, twice in a row', async () => {
    const server = createMetricsServer(services.metricsExposition!, {}, logger);
    for (let scrape = 0; scrape < 2; scrape += 1) {
      const started = performance.now();
      const response = await request(server).get('/metrics');
      expect(response.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(5000);
      expect(sampleValue(response.text, 'scoring_batch_elements_pending')).toBeNaN();
      expect(sampleValue(response.text, 'scoring_job_queue_depth')).toBeNaN();
      expect(response.text).toContain('# TYPE scoring_runs_total counter');
    }
  });
});
