import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { UserService } from './auth/user-service.js';
import { UserStore } from './auth/user-store.js';
import type { AppConfig } from './config/config.js';
import { createDatabase } from './db/database.js';
import { DeployedScenarioResolver } from './scenarios/deployed-scenario-resolver.js';

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
  // ── scenarios ──
  // ── execution ──
}

export async function createServices(config: AppConfig, logger: Logger): Promise<Services> {
  const db = createDatabase(config.databaseUrl);
  const users = new UserService(new UserStore(db));
  // ── internal data ──
  const deployedScenarios = new DeployedScenarioResolver(db);
  // ── engine ──
  // ── scenarios ──
  // ── execution ──
  return { config, logger, db, users, deployedScenarios };
}

export async function closeServices(services: Services): Promise<void> {
  // ── execution ──
  // ── engine ──
  await services.db.destroy();
}
