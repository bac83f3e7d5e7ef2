import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../../src/logger.js';
import { PrometheusMetrics } from '../../src/metrics/prometheus-metrics.js';
import { sampleValue } from '../support/prometheus-text.js';

describe('engine host metrics', () => {
  it('count host deaths, the items they failed and ran again, replacements and quarantines; the gauge reads the engine', async () => {
    const metrics = new PrometheusMetrics({ probeTimeoutMs: 100, maxScenarioSeries: 10 }, createLogger('silent'));
    metrics.setScrapeProbes({
      batchElementsPending: async () => 0,
      jobQueueDepth: async () => 0,
      engineQueuedItems: () => ({ live: 1, validation: 2, bulk: 3, background: 4 }),
      engineQuarantinedTenants: () => 1,
    });
    metrics.engineEvent({
      kind: 'host-died',
      host: 0,
      pid: 1,
      exit: 'SIGABRT',
      runsFailed: 3,
      runsRequeued: 5,
      owner: 7,
      stderr: '',
    });
    metrics.engineEvent({
      kind: 'host-died',
      host: 1,
      pid: 2,
      exit: 'SIGKILL',
      runsFailed: 0,
      runsRequeued: 0,
      owner: null,
      stderr: '',
    });
    metrics.engineEvent({ kind: 'host-replaced', host: 2, reason: 'memory' });
    metrics.engineEvent({ kind: 'tenant-quarantined', owner: 7, crashes: 2, untilMs: 600_000 });
    const text = await metrics.render();
    expect(sampleValue(text, 'scoring_engine_host_deaths_total')).toBe(2);
    expect(sampleValue(text, 'scoring_engine_crash_items_total', { outcome: 'failed' })).toBe(3);
    expect(sampleValue(text, 'scoring_engine_crash_items_total', { outcome: 'requeued' })).toBe(5);
    expect(sampleValue(text, 'scoring_engine_host_replacements_total', { reason: 'memory' })).toBe(1);
    expect(sampleValue(text, 'scoring_engine_quarantines_total')).toBe(1);
    expect(sampleValue(text, 'scoring_engine_quarantined_tenants')).toBe(1);
    expect(sampleValue(text, 'scoring_engine_queued_items', { lane: 'validation' })).toBe(2);
  });
});
