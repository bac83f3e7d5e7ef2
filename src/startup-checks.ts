import { loadConfig, type AppConfig } from './config/config.js';
import { redactedUrl } from './config/redacted-url.js';
import type { Knex } from 'knex';
import { createDatabase } from './db/database.js';
import { StaticMigrationSource } from './db/migration-source.js';
import { pingJobStore } from './execution/job-store.js';


/** The migrations this code needs that the database has not applied (read-only: knex's own listing would create its table). */
async function pendingMigrations(db: Knex): Promise<string[]> {
  const known = await new StaticMigrationSource().getMigrations();
  if (!(await db.schema.hasTable('knex_migrations'))) return known;
  const applied = new Set((await db('knex_migrations').select('name') as Array<{ name: string }>).map((row) => row.name));
  return known.filter((name) => !applied.has(name));
}

/**
 * Checks that MySQL answers with a migrated database and that the job store answers; returns one actionable
 * line per failure (the service prints it and exits instead of starting half-connected: on an unmigrated
 * database it would start, say ready, and answer scoring with 500s).
 */
export async function checkDependencies(config: AppConfig): Promise<string[]> {
  const problems: string[] = [];
  const db = createDatabase(config.databaseUrl, { min: 0, max: 1 }, true);
  const where = redactedUrl(config.databaseUrl);
  const name = decodeURIComponent(new URL(config.databaseUrl).pathname.slice(1));
  try {
    await db.raw('SELECT 1');
    const pending = await pendingMigrations(db);
    if (pending.length > 0) {
      problems.push(`The database ${name} at ${where} is not migrated (${pending.length} migration${pending.length === 1 ? '' : 's'} not applied, from ${pending[0]}): run npm run migrate (make run does it), or set DATABASE_URL.`);
    }
  } catch (error) {
    // MySQL answered, and said the database is missing: not an outage, and starting MySQL would not help.
    if ((error as { code?: string }).code === 'ER_BAD_DB_ERROR') {
      problems.push(`MySQL at ${where} answers, but the database ${name} does not exist: create and migrate it with npm run migrate (make run does both), or set DATABASE_URL.`);
    } else {
      problems.push(`MySQL at ${where} is unreachable (${(error as Error).message}); start it (make services) or set DATABASE_URL.`);
    }
  } finally {
    await db.destroy();
  }
  try {
    await pingJobStore(config.jobsUrl);
  } catch (error) {
    problems.push(`Job store at ${redactedUrl(config.jobsUrl)} is unreachable (${(error as Error).message}); start it (make services) or set JOBS_URL.`);
  }
  return problems;
}

/** Loads the configuration and checks MySQL and the job store; prints one line per problem and exits 1 if any. */
export async function loadConfigOrExit(): Promise<AppConfig> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const problems = await checkDependencies(config);
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    process.exit(1);
  }
  return config;
}
