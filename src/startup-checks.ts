import { loadConfig, type AppConfig } from './config/config.js';
import { redactedUrl } from './config/redacted-url.js';
import { createDatabase } from './db/database.js';
import { migrationProblem, pendingMigrations } from './db/pending-migrations.js';
import { pingJobStore } from './execution/job-store.js';

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
    const problem = migrationProblem(await pendingMigrations(db));
    if (problem)
      problems.push(`The database ${name} at ${where} is ${problem} (make run does it), or set DATABASE_URL.`);
  } catch (error) {
    // MySQL answered, and said the database is missing: not an outage, and starting MySQL would not help.
    if ((error as { code?: string }).code === 'ER_BAD_DB_ERROR') {
      problems.push(
        `MySQL at ${where} answers, but the database ${name} does not exist: create and migrate it with npm run migrate (make run does both), or set DATABASE_URL.`,
      );
    } else {
      problems.push(
        `MySQL at ${where} is unreachable (${(error as Error).message}); start it (make services) or set DATABASE_URL.`,
      );
    }
  } finally {
    await db.destroy();
  }
  try {
    await pingJobStore(config.jobsUrl);
  } catch (error) {
    problems.push(
      `Job store at ${redactedUrl(config.jobsUrl)} is unreachable (${(error as Error).message}); start it (make services) or set JOBS_URL.`,
    );
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
