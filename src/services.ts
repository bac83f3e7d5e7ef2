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
import { createHttpPort, ScenarioEngine, TargetPolicy } from './engine/index.js';
import { DeployedScenarioResolver } from './scenarios/deployed-scenario-resolver.js';
import { createExecution, type Execution } from './execution/execution-module.js';
import { pingJobStore } from './execution/job-store.js';
import type { HealthChecks } from './http/health-router.js';
import { ScenarioService } from './scenarios/scenario-service.js';
import { ScenarioStore } from './scenarios/scenario-store.js';

/**
 * The composition root: every long-lived object of a process, built once here and passed to the
 * features' handler factories. Build order: database → users → internal data (the engine's
 * lookups) → deployed-scenario resolver (the engine's scenario calls) → engine → scenarios →
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
  const deployedScenarios = new DeployedScenarioResolver(db);
  // ── engine ──
  const engine = new ScenarioEngine({
    ports: { lookups: collectionLookups, scenarios: deployedScenarios, http: createHttpPort(new TargetPolicy({ allowPrivate: config.outboundAllowList })) },
    limits: { timeoutMs: config.limits.runTimeoutMs, memoryMb: config.limits.scriptMemoryMb },
  });
  // ── scenarios ──
  const scenarios = new ScenarioService(new ScenarioStore(db), engine, deployedScenarios);
  // ── execution ──
  const execution = createExecution({ config, logger, db, deployedScenarios, engine });
  return { config, logger, db, users, deployedScenarios, internalData, collectionLookups, engine, scenarios, execution };
}

export async function closeServices(services: Services): Promise<void> {
  // ── execution ──
  await services.execution.close();
  // ── engine ──
  services.engine.dispose();
  await services.db.destroy();
}

/** What `/health/ready` checks: a round trip to MySQL and to the job store. */
export function healthChecks(services: Services): HealthChecks {
  return {
    database: async () => void (await services.db.raw('SELECT 1')),
    jobStore: () => pingJobStore(services.config.jobsUrl),
  };
}

/** The synchronous scoring the fast lane runs, or undefined when SCORE_FAST_LANE=false. */
export function scoreFastLane(services: Services): ((caller: { id: number }, name: string, inputs: Record<string, unknown>) => Promise<{ runId: string }>) | undefined {
  if (!services.config.scoreFastLane) return undefined;
  const execution = services.execution.service;
  return (caller, name, inputs) => execution.score(caller, name, inputs);
}
