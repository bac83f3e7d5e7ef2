import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ShadowsConfig } from '../config/config.js';
import type { ScenarioEngine } from '../engine/index.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import type { DeployListener } from '../scenarios/deploy-listener.js';
import type { ScenarioAccess } from '../scenarios/scenario-access.js';
import type { ScenarioLocks } from '../scenarios/scenario-store-type.js';
import type { ScenarioVersions } from '../scenarios/scenario-versions.js';
import { LiveShadows, type ShadowMetrics } from './live-shadows.js';
import { ShadowBudget } from './shadow-budget.js';
import { ShadowReports } from './shadow-reports.js';
import { ShadowRunWriter } from './shadow-run-writer.js';
import { ShadowService } from './shadow-service.js';
import { MySqlShadowStore } from './shadow-store.js';
import { LiveSplits, type SplitMetrics } from './live-splits.js';
import { LiveTestRetentionSweeper } from './live-test-retention.js';
import { SplitReports } from './split-reports.js';
import { SplitRunWriter } from './split-run-writer.js';
import { SplitService, type ChallengerDeploys } from './split-service.js';
import { MySqlSplitStore } from './split-store.js';

/**
 * How often buffered shadow runs are written: every 50 ms in statements of 50 rows, so that a write's statement
 * building and MariaDB's work for it come in small pieces beside the live runs (ADR 0028's addendum), not as a
 * quarter second's rows at once.
 */
const SHADOW_FLUSH_MS = 50;
/** How often buffered split runs are written (a row per live run of the scenario, a few bytes each). */
const SPLIT_FLUSH_MS = 250;
/** Shadow runs held in memory while MySQL is slow or down. */
const MAX_BUFFERED = 10_000;
/** How often worker processes delete shadow and split runs past their retention. */
const RETENTION_SWEEP_MS = 600_000;
/** How old a stored shadow run must be before a report folds it (late commits of other processes: shadow-reports.ts). */
const SETTLED_MS = 1000;

/** What `services.shadows` holds. */
export interface Shadows {
  service: ShadowService;
  /** The live path, for execution's ScenarioRunner. */
  live: LiveShadows;
  budget: ShadowBudget;
  writer: ShadowRunWriter;
  /** Champion/challenger splits: the API side, the live path (for execution's ScenarioRunner) and the writer of split runs. */
  splits: SplitService;
  splitsLive: LiveSplits;
  splitWriter: SplitRunWriter;
  /** Told of every deploy: the scenario's shadows and split end. */
  deployListener: DeployListener;
  /** Deletes shadow and split runs past LIVE_TEST_RUNS_RETENTION_DAYS (worker role: startSweeper). */
  retention: LiveTestRetentionSweeper;
  startSweeper(): void;
  close(): Promise<void>;
}

export interface ShadowsDependencies {
  config: ShadowsConfig;
  logger: Logger;
  db: Knex;
  scenarios: ScenarioAccess & ScenarioVersions & ChallengerDeploys;
  /** The scenario row lock that serialises attaching shadows and starting splits. */
  scenarioLocks: ScenarioLocks;
  engine: ScenarioEngine;
  metrics: ShadowMetrics & SplitMetrics & { recordsDropped(count: number, reason: string): void };
  modelDocuments?: ModelDocuments;
  /** A run's time limit (LIMIT_RUN_TIMEOUT_MS). */
  runTimeoutMs: number;
  /** How long a scenario's RUNNING shadows are used from the cache past their freshness (1 s). */
  maxStaleMs: number;
}

export function createShadows(deps: ShadowsDependencies): Shadows {
  const logger = deps.logger.child({ component: 'shadows' });
  const writing = (reason: string, flushMs: number) => ({
    flushMs,
    maxBuffered: MAX_BUFFERED,
    onDropped: (count: number) => deps.metrics.recordsDropped(count, reason),
  });
  const cached = { freshMs: 1000, maxStaleMs: deps.maxStaleMs };
  const models = deps.modelDocuments ?? NO_MODELS;

  const store = new MySqlShadowStore(deps.db, deps.scenarioLocks);
  let pool: ReturnType<ScenarioEngine['poolStats']> = null;
  const budget = new ShadowBudget({
    share: deps.config.engineShare,
    maxInFlight: deps.config.maxInFlight,
    engineMs: () => {
      pool = deps.engine.poolStats();
      return pool?.crossingMs ?? 0;
    },
    // Read right after engineMs (ShadowBudget reads both at once): the same copy of the pool's counters.
    background: () => (pool ? { ms: pool.backgroundMs, items: pool.backgroundItems } : { ms: 0, items: 0 }),
  });
  const writer = new ShadowRunWriter(
    store,
    { ...writing('shadow_buffer_full', SHADOW_FLUSH_MS), onWriteMs: (ms) => budget.charge(ms) },
    logger,
  );
  const live = new LiveShadows(
    store,
    deps.engine,
    budget,
    writer,
    deps.metrics,
    logger,
    { ...cached, runTimeoutMs: deps.runTimeoutMs },
    models,
  );
  const service = new ShadowService({
    scenarios: deps.scenarios,
    store,
    reports: new ShadowReports(store, SETTLED_MS),
    live,
    engine: deps.engine,
    models,
    maxPerScenario: deps.config.maxPerScenario,
  });

  const splitStore = new MySqlSplitStore(deps.db, deps.scenarioLocks);
  const splitWriter = new SplitRunWriter(splitStore, writing('split_buffer_full', SPLIT_FLUSH_MS), logger);
  const splitsLive = new LiveSplits(splitStore, splitWriter, deps.metrics, logger, cached, models);
  const splitReports = new SplitReports(splitStore, SETTLED_MS);
  const splits = new SplitService({
    scenarios: deps.scenarios,
    store: splitStore,
    reports: splitReports,
    live: splitsLive,
    engine: deps.engine,
    models,
    deploys: deps.scenarios,
  });
  const retention = new LiveTestRetentionSweeper(
    [store.runs, splitStore.runs],
    { everyMs: RETENTION_SWEEP_MS, retentionDays: deps.config.runsRetentionDays },
    deps.logger.child({ component: 'live-test-retention' }),
  );
  const deployListener: DeployListener = {
    async deployed(scenario, label) {
      await service.deployed(scenario, label);
      await splits.deployed(scenario, label);
    },
  };
  return {
    service,
    live,
    budget,
    writer,
    splits,
    splitsLive,
    splitWriter,
    deployListener,
    retention,
    startSweeper: () => retention.start(),
    close: async () => {
      retention.stop();
      await writer.close();
      await splitWriter.close();
    },
  };
}
