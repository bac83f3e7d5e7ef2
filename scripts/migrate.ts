/**
 * Creates the database if needed and applies every migration (`npm run migrate`).
 * `--fresh` drops the database first; it refuses unless APP_ENV=test.
 */
import { loadConfig } from '../src/config/config.js';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../src/db/database.js';

const config = loadConfig();
const fresh = process.argv.includes('--fresh');
const name = new URL(config.databaseUrl).pathname.slice(1);
try {
  if (fresh) {
    if (config.environment !== 'test') throw new Error('--fresh drops the database and runs only with APP_ENV=test');
    const server = new URL(config.databaseUrl);
    server.pathname = '/';
    const admin = createDatabase(server.toString(), { min: 0, max: 1 });
    await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
    await admin.destroy();
  }
  await ensureDatabaseExists(config.databaseUrl);
  const db = createDatabase(config.databaseUrl, { min: 0, max: 1 });
  await migrateToLatest(db);
  await db.destroy();
  console.error(`database ${name} migrated${fresh ? ' (fresh)' : ''}`);
} catch (error) {
  console.error(`Migration failed: ${(error as Error).message}`);
  process.exit(1);
}
