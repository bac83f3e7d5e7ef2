import type { EngineEvent, RunLane } from '../engine/index.js';
import type { MeasuredRun } from './measured-run.js';

/** How one callback attempt ended: delivered (2xx), failed with a retry scheduled, or failed for good (retries used up). */
export type CallbackOutcome = 'delivered' | 'retrying' | 'failed';

/** What the scrape-time gauges read from MySQL and the job store (each read is time-boxed by the metrics). */
export interface ScrapeProbes {
  /** Elements of unfinished batches whose results are not stored yet (the whole deployment). */
  batchElementsPending(): Promise<number>;
  /** Jobs due in the job store (queued or running; callback retries not yet due are not counted). */
  jobQueueDepth(): Promise<number>;
  /** Sandbox work items waiting for an engine host of this process, by lane (answers at once). */
  engineQueuedItems(): Record<RunLane, number>;
  /** Tenants whose runs are quarantined on an engine host of their own in this process (answers at once). */
  engineQuarantinedTenants(): number;
}

/**
 * What the rest of the service tells the metrics. Every method answers at once and never throws:
 * they are called on hot paths. With METRICS_ENABLED off the implementation does nothing
 * (NoopMetrics); with it on, PrometheusMetrics counts in memory and renders at scrape time.
 */
export interface Metrics {
  /** A run of a deployed version ended (ScenarioRunner tells its RunListener, which the composition root makes this). */
  runFinished(run: MeasuredRun): void;
  callbackDelivered(outcome: CallbackOutcome): void;
  /** Decision records the recorder could not keep (`reason` says why, e.g. its buffer was full). */
  recordsDropped(count: number, reason: string): void;
  /**
   * Stored work the stalled-work sweeper found without a pending job and queued again (`kind`: runs,
   * chunks, callbacks, replays): each one needed recovery (its API or worker died, or the job store lost it).
   */
  workRecovered(kind: string, count: number): void;
  /** Runs the run statistics could not keep (their buffer was full while MySQL refused the writes). */
  statisticsDropped(count: number): void;
  /** An engine host died or was replaced, or a tenant was quarantined (src/engine/pool/engine-pool.ts). */
  engineEvent(event: EngineEvent): void;
  /** A shadow run ended (docs/live-tests.md): `failed` when the shadow's run failed (the champion's outcome does not count). */
  shadowRunFinished(outcome: 'succeeded' | 'failed'): void;
  /** A sampled shadow run was not run: its process's shadow budget was spent (`budget`) or SHADOW_MAX_IN_FLIGHT runs were in flight (`in_flight`). */
  shadowRunSkipped(reason: 'budget' | 'in_flight'): void;
  /** A live run given to an arm of a champion/challenger split ended (docs/live-tests.md). */
  splitRunFinished(arm: 'champion' | 'challenger', outcome: 'succeeded' | 'failed'): void;
  /** Where the scrape-time gauges read from (set once the stores exist). */
  setScrapeProbes(probes: ScrapeProbes): void;
}

/** The text a scrape answers, and its content type. */
export interface MetricsExposition {
  readonly contentType: string;
  render(): Promise<string>;
}
