import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import type { EngineEvent } from '../engine/index.js';
import type { MeasuredRun } from './measured-run.js';
import type { CallbackOutcome, Metrics, MetricsExposition, ScrapeProbes } from './metrics.js';
import { DurationHistogram } from './duration-histogram.js';
import { registerProcessMetrics } from './process-metrics.js';
import { type PrometheusCounters, registerPrometheusCounters } from './prometheus-counters.js';
import { RunCounters } from './run-counters.js';
import { ScrapeProbe } from './scrape-probe.js';

/** Run durations: a run takes from tens of microseconds to the run time limit (1 s by default). */
const DURATION_BUCKETS_SECONDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

const SANDBOX_LIMITS: Record<string, 'time' | 'memory' | 'crash' | undefined> = {
  TIME_LIMIT_EXCEEDED: 'time',
  MEMORY_LIMIT_EXCEEDED: 'memory',
  ENGINE_CRASHED: 'crash',
};

export interface PrometheusMetricsOptions {
  /** Longest a scrape waits for a gauge read from MySQL or the job store. */
  probeTimeoutMs: number;
  /** Most (owner, scenario, version) series of scoring_runs_total (see RunCounters). */
  maxScenarioSeries: number;
}

/**
 * The metrics of one process in Prometheus's text format (prom-client), on a registry of its own.
 * A run costs a few array increments (RunCounters, DurationHistogram): the per-scenario run counts
 * are copied into prom-client when a scrape asks for them, and the duration histogram is written
 * next to prom-client's text. The gauges that need MySQL or the job store are read at scrape time,
 * time-boxed (ScrapeProbe). Names, labels and meanings: docs/metrics.md.
 */
export class PrometheusMetrics implements Metrics, MetricsExposition {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;
  private readonly runs: RunCounters;
  private readonly durations: DurationHistogram;
  private readonly counters: PrometheusCounters;
  private probes?: {
    batchElementsPending: ScrapeProbe;
    jobQueueDepth: ScrapeProbe;
    engineQueuedItems: ScrapeProbes['engineQueuedItems'];
    engineQuarantinedTenants: ScrapeProbes['engineQuarantinedTenants'];
  };

  constructor(
    private readonly options: PrometheusMetricsOptions,
    private readonly logger: Logger,
  ) {
    const registers = [this.registry];
    registerProcessMetrics(this.registry);
    const runs = new RunCounters(options.maxScenarioSeries);
    this.runs = runs;
    new Counter({
      name: 'scoring_runs_total',
      help: 'Runs of deployed scenario versions by owner (username), scenario name, version, mode (sync, async, batch) and outcome (succeeded, invalid_input, failed).',
      labelNames: ['owner', 'scenario', 'version', 'mode', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const { labels, value } of runs.values()) this.inc(labels, value);
      },
    });
    this.durations = new DurationHistogram(
      'scoring_run_duration_seconds',
      'Duration of runs of deployed scenario versions (compile, cached after the first run, and run in the engine pool), by mode.',
      DURATION_BUCKETS_SECONDS,
    );
    this.counters = registerPrometheusCounters(this.registry);
    const probes = () => this.probes;
    new Gauge({
      name: 'scoring_batch_elements_pending',
      help: 'Elements of unfinished batches whose results are not stored yet, whole deployment (read from MySQL at scrape time; NaN when it does not answer in time).',
      registers,
      async collect() {
        this.set((await probes()?.batchElementsPending.value()) ?? Number.NaN);
      },
    });
    new Gauge({
      name: 'scoring_job_queue_depth',
      help: 'Jobs due in the job store, queued or running, whole deployment (read at scrape time; NaN when the job store does not answer in time).',
      registers,
      async collect() {
        this.set((await probes()?.jobQueueDepth.value()) ?? Number.NaN);
      },
    });
    new Gauge({
      name: 'scoring_engine_queued_items',
      help: 'Sandbox work items (steps of runs, test expressions) waiting for an engine host of this process, by lane: live (scores, debug), validation (test cases), bulk (batch elements), background (replays).',
      labelNames: ['lane'],
      registers,
      collect() {
        const queued = probes()?.engineQueuedItems();
        for (const lane of ['live', 'validation', 'bulk', 'background'] as const)
          this.set({ lane }, queued ? queued[lane] : Number.NaN);
      },
    });
    new Gauge({
      name: 'scoring_engine_quarantined_tenants',
      help: 'Tenants whose runs killed engine hosts repeatedly and now run one at a time on a host of their own, in this process.',
      registers,
      collect() {
        this.set(probes()?.engineQuarantinedTenants() ?? Number.NaN);
      },
    });
  }

  runFinished(run: MeasuredRun): void {
    const series = this.runs.count(run);
    this.durations.observe(run.mode, run.durationMs / 1000);
    if (run.errorCode === null) return;
    const limit = SANDBOX_LIMITS[run.errorCode];
    if (limit)
      this.counters.sandboxLimitFailures.inc({ owner: series.owner, scenario: series.scenario, mode: run.mode, limit });
  }

  callbackDelivered(outcome: CallbackOutcome): void {
    this.counters.callbacks.inc({ outcome });
  }

  recordsDropped(count: number, reason: string): void {
    if (count > 0) this.counters.droppedRecords.inc({ reason }, count);
  }

  workRecovered(kind: string, count: number): void {
    if (count > 0) this.counters.recoveredWork.inc({ kind }, count);
  }

  statisticsDropped(count: number): void {
    if (count > 0) this.counters.droppedStatistics.inc(count);
  }

  engineEvent(event: EngineEvent): void {
    if (event.kind === 'host-died') {
      this.counters.hostDeaths.inc();
      if (event.runsFailed > 0) this.counters.crashedRuns.inc({ outcome: 'failed' }, event.runsFailed);
      if (event.runsRequeued > 0) this.counters.crashedRuns.inc({ outcome: 'requeued' }, event.runsRequeued);
    } else if (event.kind === 'host-replaced') {
      this.counters.hostReplacements.inc({ reason: event.reason });
    } else {
      this.counters.quarantines.inc();
    }
  }

  shadowRunFinished(outcome: 'succeeded' | 'failed'): void {
    this.counters.shadowRuns.inc({ outcome });
  }

  shadowRunSkipped(reason: 'budget' | 'in_flight'): void {
    this.counters.shadowSkips.inc({ reason });
  }

  splitRunFinished(arm: 'champion' | 'challenger', outcome: 'succeeded' | 'failed'): void {
    this.counters.splitRuns.inc({ arm, outcome });
  }

  setScrapeProbes(probes: ScrapeProbes): void {
    const probe = (name: string, read: () => Promise<number>) =>
      new ScrapeProbe(read, this.options.probeTimeoutMs, (error) => {
        this.logger.debug({ err: error, gauge: name }, 'a metrics gauge could not be read');
      });
    this.probes = {
      batchElementsPending: probe('scoring_batch_elements_pending', () => probes.batchElementsPending()),
      jobQueueDepth: probe('scoring_job_queue_depth', () => probes.jobQueueDepth()),
      engineQueuedItems: () => probes.engineQueuedItems(),
      engineQuarantinedTenants: () => probes.engineQuarantinedTenants(),
    };
  }

  async render(): Promise<string> {
    return `${await this.registry.metrics()}\n${this.durations.render()}`;
  }
}
