import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { UserService } from './auth/user-service.js';
import { UserStore } from './auth/user-store.js';
import type { AppConfig } from './config/config.js';
import { createDatabase } from './db/database.js';
// ── internal data ──
import { CollectionLookupPort } from './internal-data/collection-lookup-port.js';
import { InternalDataService } from './internal-data/internal-data-service.js';
import { InternalDataStore } from './internal-data/internal-data-store.js';
import { ScenarioEngine } from './engine/index.js';
import { createOutbound, type Outbound } from './outbound/outbound.js';
import { DeployedScenarioResolver } from './scenarios/deployed-scenario-resolver.js';
import type { AppDependencies } from './app.js';
import { createExecution, type Execution } from './execution/execution-module.js';
import { executionOperations } from './execution/execution-operations.js';
import { pingJobStore } from './execution/job-store.js';
import type { HealthChecks } from './http/health-router.js';
import { ScenarioService } from './scenarios/scenario-service.js';
import { ScenarioStore } from './scenarios/scenario-store.js';

/**
 * The composition root: every long-lived object of a process, built once here and passed to the
 * features' handler factories. Build order: database → users → internal data (the engine's
 * lookups) → deployed-scenario resolver (the engine's scenario calls, execution's "latest deployed
 * version") → outbound HTTP (the engine's HTTP calls, execution's callbacks) → engine → scenarios →
 * execution.
 */
export interface Services {
  config: AppConfig;
  logger: Logger;
  db: Knex;
  users: UserService;
  deployedScenarios: DeployedScenarioResolver;
  // ── internal data ──
  internalData: InternalDataService;
  collectionLookups: CollectionLookupPort;
  // ── outbound HTTP ──
  outbound: Outbound;
  // ── engine ──
  engine: ScenarioEngine;
  // ── scenarios ──
  scenarios: ScenarioService;
  // ── execution ──
  execution: Execution;
}

export async function createServices(config: AppConfig, logger: Logger): Promise<Services> {
  const db = createDatabase(config.databaseUrl);
  const users = new UserService(new UserStore(db), { scoreTokenCacheMs: config.scoreTokenCacheSeconds * 1000 });
  // ── internal data ──
  const internalDataStore = new InternalDataStore(db);
  const collectionLookups = new CollectionLookupPort(internalDataStore);
  const internalData = new InternalDataService(internalDataStore, collectionLookups, logger);
  const scenarioStore = new ScenarioStore(db);
  const deployedScenarios = new DeployedScenarioResolver(scenarioStore);
  // ── outbound HTTP ──
  const outbound = createOutbound(config);
  // ── engine ──
  const engine = new ScenarioEngine({
    ports: { lookups: collectionLookups, scenarios: deployedScenarios, http: outbound.client },
    limits: { timeoutMs: config.limits.runTimeoutMs, memoryMb: config.limits.scriptMemoryMb, testCasesBudgetMs: config.limits.testCasesBudgetMs },
    pool: config.engine,
  });
  // ── scenarios ──
  const scenarios = new ScenarioService(scenarioStore, engine, deployedScenarios);
  // ── execution ──
  const execution = createExecution({ config, logger, db, deployedScenarios, engine, outbound });
  return { config, logger, db, users, deployedScenarios, internalData, collectionLookups, outbound, engine, scenarios, execution };
}

export async function closeServices(services: Services): Promise<void> {
  // ── execution ──
  await services.execution.close();
  // ── engine ──
  await services.engine.dispose();
  await services.db.destroy();
}

/** What `/health/ready` checks: a round trip to MySQL and to the job store. */
export function healthChecks(services: Services): HealthChecks {
  return {
    database: async () => void (await services.db.raw('SELECT 1')),
    jobStore: () => pingJobStore(services.config.jobsUrl),
  };
}

/** The operations the fast lane serves (the execution hot paths), or undefined when SCORE_FAST_LANE=false. */
export function fastLaneOperations(services: Services): AppDependencies['fastLane'] {
  if (!services.config.scoreFastLane) return undefined;
  return executionOperations(services.execution.service, services.execution.batches);
}
