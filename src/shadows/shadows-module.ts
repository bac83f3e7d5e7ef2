import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ShadowsConfig } from '../config/config.js';
import type { ScenarioEngine } from '../engine/index.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import type { ScenarioAccess } from '../scenarios/scenario-access.js';
import type { ScenarioVersions } from '../scenarios/scenario-versions.js';
import { LiveShadows, type ShadowMetrics } from './live-shadows.js';
import { ShadowBudget } from './shadow-budget.js';
import { ShadowReports } from './shadow-reports.js';
import { ShadowRunWriter } from './shadow-run-writer.js';
import { ShadowService } from './shadow-service.js';
import { MySqlShadowStore } from './shadow-store.js';

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
  close(): Promise<void>;
}

export interface ShadowsDependencies {
  config: ShadowsConfig;
  engineHosts: number;
  logger: Logger;
  db: Knex;
  scenarios: ScenarioAccess & ScenarioVersions;
  engine: ScenarioEngine;
  metrics: ShadowMetrics & { recordsDropped(count: number, reason: string): void };
  modelDocuments?: ModelDocuments;
  /** A run's time limit (LIMIT_RUN_TIMEOUT_MS). */
  runTimeoutMs: number;
  /** How long a scenario's RUNNING shadows are used from the cache past their freshness (1 s). */
  maxStaleMs: number;
}

export function createShadows(deps: ShadowsDependencies): Shadows {
  const logger = deps.logger.child({ component: 'shadows' });
  const store = new MySqlShadowStore(deps.db);
  const budget = new ShadowBudget({ share: deps.config.engineShare, engineHosts: deps.engineHosts, maxInFlight: deps.config.maxInFlight });
  const writer = new ShadowRunWriter(store, { flushMs: FLUSH_MS, maxBuffered: MAX_BUFFERED, onDropped: (count) => deps.metrics.recordsDropped(count, 'shadow_buffer_full') }, logger);
  const models = deps.modelDocuments ?? NO_MODELS;
  const live = new LiveShadows(store, deps.engine, budget, writer, deps.metrics, logger, { freshMs: 1000, maxStaleMs: deps.maxStaleMs, runTimeoutMs: deps.runTimeoutMs }, models);
  const service = new ShadowService(deps.scenarios, store, new ShadowReports(store, SETTLED_MS), live, deps.engine, deps.config.maxPerScenario, models);
  return { service, live, budget, writer, close: () => writer.close() };
}
