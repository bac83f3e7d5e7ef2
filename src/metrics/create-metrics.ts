import type { Logger } from 'pino';
import type { MetricsConfig } from '../config/config.js';
import type { Metrics, MetricsExposition } from './metrics.js';
import { NoopMetrics } from './noop-metrics.js';
import { PrometheusMetrics } from './prometheus-metrics.js';

/** The metrics of a process: Prometheus's when METRICS_ENABLED, else nothing (and nothing to serve). */
export function createMetrics(
  config: MetricsConfig,
  logger: Logger,
): { metrics: Metrics; exposition?: MetricsExposition } {
  if (!config.enabled) return { metrics: new NoopMetrics() };
  const metrics = new PrometheusMetrics(
    { probeTimeoutMs: config.probeTimeoutMs, maxScenarioSeries: config.maxScenarioSeries },
    logger.child({ component: 'metrics' }),
  );
  return { metrics, exposition: metrics };
}
