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
import { SplitReports } from './split-reports.js';
import { SplitRunWriter } from './split-run-writer.js';
import { SplitService, type ChallengerDeploys } from './split-service.js';
import { MySqlSplitStore } from './split-store.js';

/** How often buffered shadow runs are written. */
const FLUSH_MS = 250;
/** Shadow runs held in memory while MySQL is slow or down. */
const MAX_BUFFERED = 10_000;
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
  close(): Promise<void>;
}

export interface ShadowsDependencies {
  config: ShadowsConfig;
  engineHosts: number;
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
  const store = new MySqlShadowStore(deps.db, deps.scenarioLocks);
  const budget = new ShadowBudget({
    share: deps.config.engineShare,
    engineHosts: deps.engineHosts,
    maxInFlight: deps.config.maxInFlight,
  });
  const writer = new ShadowRunWriter(
    store,
    {
      flushMs: FLUSH_MS,
      maxBuffered: MAX_BUFFERED,
      onDropped: (count) => deps.metrics.recordsDropped(count, 'shadow_buffer_full'),
    },
    logger,
  );
  const models = deps.modelDocuments ?? NO_MODELS;
  const live = new LiveShadows(
    store,
    deps.engine,
    budget,
    writer,
    deps.metrics,
    logger,
    { freshMs: 1000, maxStaleMs: deps.maxStaleMs, runTimeoutMs: deps.runTimeoutMs },
    models,
  );
  const service = new ShadowService(
    deps.scenarios,
    store,
    new ShadowReports(store, SETTLED_MS),
    live,
    deps.engine,
    deps.config.maxPerScenario,
    models,
  );
  const splitStore = new MySqlSplitStore(deps.db, deps.scenarioLocks);
  const splitWriter = new SplitRunWriter(
    splitStore,
    {
      flushMs: FLUSH_MS,
      maxBuffered: MAX_BUFFERED,
      onDropped: (count) => deps.metrics.recordsDropped(count, 'split_buffer_full'),
    },
    logger,
  );
  const splitsLive = new LiveSplits(
    splitStore,
    splitWriter,
    deps.metrics,
    logger,
    { freshMs: 1000, maxStaleMs: deps.maxStaleMs },
    models,
  );
  const splits = new SplitService(
    deps.scenarios,
    deps.scenarios,
    splitStore,
    new SplitReports(splitStore, SETTLED_MS),
    splitsLive,
    deps.engine,
    models,
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
    close: async () => {
      await writer.close();
      await splitWriter.close();
    },
  };
}
