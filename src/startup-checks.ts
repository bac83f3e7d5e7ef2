import { loadConfig, type AppConfig } from './config/config.js';
import { redactedUrl } from './config/redacted-url.js';
import { createDatabase } from './db/database.js';
import { pingJobStore } from './execution/job-store.js';


/**
 * Checks that MySQL and the job store answer; returns one actionable line per failure
 * (the service prints it and exits instead of starting half-connected).
 */
export async function checkDependencies(config: AppConfig): Promise<string[]> {
  const problems: string[] = [];
  const db = createDatabase(config.databaseUrl, { min: 0, max: 1 }, true);
  try {
    await db.raw('SELECT 1');
  } catch (error) {
    problems.push(`MySQL at ${redactedUrl(config.databaseUrl)} is unreachable (${(error as Error).message}); start it (make services) or set DATABASE_URL.`);
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
