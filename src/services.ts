import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { UserService } from './auth/user-service.js';
import { UserStore } from './auth/user-store.js';
import type { AppConfig } from './config/config.js';
import { createDatabase } from './db/database.js';
import { createHttpPort, ScenarioEngine, TargetPolicy } from './engine/index.js';
import { DeployedScenarioResolver } from './scenarios/deployed-scenario-resolver.js';
import { createExecution, type Execution } from './execution/execution-module.js';
import { ScenarioService } from './scenarios/scenario-service.js';
import { ScenarioStore } from './scenarios/scenario-store.js';
import { unavailableLookups } from './scenarios/unavailable-lookups.js';

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
  // ── engine ──
  engine: ScenarioEngine;
  // ── scenarios ──
  scenarios: ScenarioService;
  // ── execution ──
  execution: Execution;
}

export async function createServices(config: AppConfig, logger: Logger): Promise<Services> {
  const db = createDatabase(config.databaseUrl);
  const users = new UserService(new UserStore(db));
  // ── internal data ──
  const deployedScenarios = new DeployedScenarioResolver(db);
  // ── engine ──
  const engine = new ScenarioEngine({
    // TODO(internal data): services.collectionLookups once it exists; until then no collection exists.
    ports: { lookups: unavailableLookups, scenarios: deployedScenarios, http: createHttpPort(new TargetPolicy({ allowPrivate: config.outboundAllowList })) },
    limits: { timeoutMs: config.limits.runTimeoutMs, memoryMb: config.limits.scriptMemoryMb },
  });
  // ── scenarios ──
  const scenarios = new ScenarioService(new ScenarioStore(db), engine, deployedScenarios);
  // ── execution ──
  const execution = createExecution({ config, logger, db, deployedScenarios, engine });
  return { config, logger, db, users, deployedScenarios, engine, scenarios, execution };
}

export async function closeServices(services: Services): Promise<void> {
  // ── execution ──
  await services.execution.close();
  // ── engine ──
  services.engine.dispose();
  await services.db.destroy();
}
