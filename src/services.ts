import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { UserService } from './auth/user-service.js';
import { UserStore } from './auth/user-store.js';
import type { AppConfig } from './config/config.js';
import { createDatabase } from './db/database.js';

/**
 * The composition root: every long-lived object of a process, built once and passed to the
 * features' handler factories. Features add their services here.
 */
export interface Services {
  config: AppConfig;
  logger: Logger;
  db: Knex;
  users: UserService;
}

export async function createServices(config: AppConfig, logger: Logger): Promise<Services> {
  const db = createDatabase(config.databaseUrl);
  const users = new UserService(new UserStore(db));
  return { config, logger, db, users };
}

export async function closeServices(services: Services): Promise<void> {
  await services.db.destroy();
}
