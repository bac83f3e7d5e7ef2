import type { Metrics } from './metrics.js';

/** METRICS_ENABLED=false: nothing is counted and nothing is served. */
export class NoopMetrics implements Metrics {
  runFinished(): void {}
  callbackDelivered(): void {}
  recordsDropped(): void {}
  workRecovered(): void {}
  statisticsDropped(): void {}
  engineEvent(): void {}
  shadowRunFinished(): void {}
  shadowRunSkipped(): void {}
  splitRunFinished(): void {}
  setScrapeProbes(): void {}
}
