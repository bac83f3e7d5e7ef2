import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config.js';
import type { ScenarioEngine } from '../engine/scenario-engine.js';
import type { Metrics } from '../metrics/metrics.js';
import { NoopMetrics } from '../metrics/noop-metrics.js';
import type { Outbound } from '../outbound/outbound.js';
import type { RunErrorMasking } from '../records/run-error-masking.js';
import type { RunRecorder, StoredRunRecords } from '../records/run-recorder.js';
import type { DeployedScenarios } from '../scenarios/deployed-scenarios.js';
import { AsyncSubmissions } from './async-submissions.js';
import { BatchService } from './batch-service.js';
import { MySqlBatchStore, type BatchStore } from './batch-store.js';
import { CallbackDelivery, type CallbackSecrets } from './callback-delivery.js';
import { createCallbackSlots } from './callback-slots.js';
import { ExecutionQueue } from './execution-queue.js';
import { ExecutionService } from './execution-service.js';
import { loadExecutionSettings, type ExecutionSettings } from './execution-settings.js';
import { ExecutionWorker } from './execution-worker.js';
import { NO_RUN_LISTENER, type RunListener } from './run-listener.js';
import { MySqlRunResultStore, type RunResultStore } from './run-result-store.js';
import { RunRetentionSweeper } from './run-retention-sweeper.js';
import { ScenarioRunner } from './scenario-runner.js';
import type { RunShadows } from './run-shadows.js';
import type { RunSplits } from './run-splits.js';
import { StalledWorkSweeper } from './stalled-work-sweeper.js';

/** What `services.execution` holds: the API-side services, the worker (started only by processes that process jobs) and the queue. */
export interface Execution {
  service: ExecutionService;
  batches: BatchService;
  worker: ExecutionWorker;
  queue: ExecutionQueue;
  settings: ExecutionSettings;
  store: RunResultStore;
  batchStore: BatchStore;
  sweeper: StalledWorkSweeper;
  /** Deletes finished async runs and batches past RUN_RESULTS_RETENTION_DAYS (worker role). */
  retention: RunRetentionSweeper;
  /** Starts processing jobs in this process (worker role), with the stalled-work sweeper. */
  startWorker(): Promise<void>;
  /** Stops taking jobs (held ones are unlocked for another worker) and closes the job store. */
  close(): Promise<void>;
}

export interface ExecutionDependencies {
  config: AppConfig;
  logger: Logger;
  db: Knex;
  /** The scenarios feature's "latest deployed version" (execution never reads scenario tables). */
  deployedScenarios: DeployedScenarios;
  /** The shared engine (services.engine). */
  engine: ScenarioEngine;
  /** The shared outbound HTTP client and target policy (services.outbound): callbacks use both. */
  outbound: Outbound;
  /** Each user's callback signing secret (services.users). */
  callbackSecrets: CallbackSecrets;
  /** Told of callback deliveries and of recovered work (services.metrics). */
  metrics?: Pick<Metrics, 'callbackDelivered' | 'workRecovered'>;
  /** Told of every run of a deployed version, in every mode (metrics and run statistics). */
  runListener?: RunListener;
  /** The records feature's recorder of runs (services.records); without it nothing is recorded. */
  runRecorder?: RunRecorder;
  /** Writes stored runs' decision records in the transaction of their outcomes (services.records). */
  storedRunRecords?: StoredRunRecords;
  /** Masks pii input values in the errors of async runs and batch elements before they are stored (services.records). */
  runErrorMasking?: RunErrorMasking;
  /** The shadows of live versions (the live tests feature, services.shadows); without it none run. */
  runShadows?: RunShadows;
  /** The champion/challenger splits of live versions (services.shadows.splitsLive); without it the champion runs every time. */
  runSplits?: RunSplits;
  settings?: ExecutionSettings;
}

/** How often worker processes delete finished async runs and batches past their retention. */
const RETENTION_SWEEP_MS = 600_000;

/** How long a callback attempt waits (a delayed job) when its tenant's delivery slots are all taken. */
const CALLBACK_SLOT_WAIT_SECONDS = 1;

/**
 * How long a callback delivery slot lasts if its process dies while delivering: two HTTP attempts (a request
 * sent again once on a new connection when a kept-alive one was closed under it) and 10 s for the rest.
 */
function callbackSlotLeaseMs(callbackTimeoutMs: number): number {
  return 2 * callbackTimeoutMs + 10_000;
}

export function createExecution(deps: ExecutionDependencies): Execution {
  const { config, logger, db, engine } = deps;
  const settings = deps.settings ?? loadExecutionSettings(config);
  const store = new MySqlRunResultStore(db, deps.storedRunRecords);
  const batchStore = new MySqlBatchStore(db, deps.storedRunRecords);
  const queue = new ExecutionQueue(config.jobsUrl, settings, logger.child({ component: 'execution-queue' }));
  const runner = new ScenarioRunner(
    engine,
    deps.deployedScenarios,
    deps.runListener ?? NO_RUN_LISTENER,
    deps.runRecorder,
    deps.runErrorMasking,
    deps.runShadows,
    deps.runSplits,
  );
  const slots = createCallbackSlots({
    jobsUrl: config.jobsUrl,
    keyPrefix: settings.keyPrefix,
    perTenant: config.limits.callbackSlotsPerTenant,
    leaseMs: callbackSlotLeaseMs(config.limits.callbackTimeoutMs),
    logger: logger.child({ component: 'callback-slots' }),
  });
  const callbacks = new CallbackDelivery(
    store,
    queue,
    deps.outbound.client,
    deps.callbackSecrets,
    {
      legacySigningSecret: config.callbackLegacySignature ? config.callbackSigningSecret : undefined,
      timeoutMs: config.limits.callbackTimeoutMs,
      retryFloorSeconds: config.limits.callbackRetryFloorSeconds,
      retryMaxDelaySeconds: config.limits.callbackMaxDelaySeconds,
      slotWaitSeconds: CALLBACK_SLOT_WAIT_SECONDS,
    },
    logger.child({ component: 'callbacks' }),
    deps.metrics ?? new NoopMetrics(),
    slots,
  );
  const worker = new ExecutionWorker(
    runner,
    store,
    batchStore,
    queue,
    callbacks,
    settings,
    logger.child({ component: 'execution-worker' }),
  );
  const service = new ExecutionService(
    config,
    runner,
    store,
    new AsyncSubmissions(store, queue),
    deps.outbound.policy,
    deps.callbackSecrets,
  );
  const batches = new BatchService(config, runner, batchStore, queue, logger.child({ component: 'batches' }));
  const sweeper = new StalledWorkSweeper(
    store,
    batchStore,
    queue,
    { stalledAfterMs: settings.stalledAfterMs, sweepEveryMs: settings.sweepEveryMs },
    logger.child({ component: 'stalled-work-sweeper' }),
    deps.metrics ?? new NoopMetrics(),
  );
  const retention = new RunRetentionSweeper(
    store,
    batchStore,
    { retentionDays: settings.resultRetentionDays, everyMs: RETENTION_SWEEP_MS },
    logger.child({ component: 'run-retention' }),
  );
  return {
    service,
    batches,
    worker,
    queue,
    settings,
    store,
    batchStore,
    sweeper,
    retention,
    async startWorker() {
      await worker.start();
      sweeper.start();
      retention.start();
    },
    async close() {
      sweeper.stop();
      retention.stop();
      await queue.close();
      await slots.close();
    },
  };
}
