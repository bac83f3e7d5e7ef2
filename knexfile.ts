// Used by the knex CLI (`npx knex migrate:status`); the service and tests migrate through scripts/migrate.ts.
import { loadConfig } from './src/config/config.js';
import { knexConfig } from './src/db/database.js';

export default knexConfig(loadConfig().databaseUrl);
