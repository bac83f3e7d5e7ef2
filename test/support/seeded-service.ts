import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './private-redis.js';
import { startServiceProcess, stopAll, waitUntilListening, type ServiceProcess } from './service-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

export interface SeededService {
  port: number;
  api: ServiceProcess;
  /** demo's bearer token and score token. */
  accessToken: string;
  scoreToken: string;
  stop(): Promise<void>;
}

/**
 * The service as `make run` leaves it, on a database of its own: migrated from scratch (so the example scenario
 * gets the ids a new install gives it, the ones the spec's examples name), `scripts/seed-example.ts` run (the
 * record, batch and replays the spec's examples name by id included), demo's
 * credentials issued with `scripts/token.ts`, and `src/main.ts` (API and worker) listening on a free port.
 * The database is the suite's DATABASE_URL with `_docs` appended to its name.
 */
export async function startSeededService(): Promise<SeededService> {
  const suiteUrl = new URL(process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_test');
  const databaseUrl = new URL(suiteUrl);
  databaseUrl.pathname = `${suiteUrl.pathname}_docs`;
  // The seed queues the example batch's jobs: the service's worker takes them from the same job store prefix.
  const jobsKeyPrefix = `scoring:test:docs:${randomUUID().slice(0, 8)}:`;
  const env = {
    ...process.env,
    NODE_OPTIONS: '',
    APP_ENV: 'test',
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl.toString(),
    JOBS_KEY_PREFIX: jobsKeyPrefix,
  };
  const tsx = `${ROOT}node_modules/.bin/tsx`;
  await run(tsx, ['scripts/migrate.ts', '--fresh'], { cwd: ROOT, env });
  await run(tsx, ['scripts/seed-example.ts'], { cwd: ROOT, env });
  const { stdout } = await run(tsx, ['scripts/token.ts', 'demo', '--rotate'], { cwd: ROOT, env });
  const credentials = JSON.parse(stdout) as { accessToken: string; scoreToken: string };
  const port = await freePort();
  const api = startServiceProcess('src/main.ts', {
    PORT: String(port),
    DATABASE_URL: databaseUrl.toString(),
    JOBS_KEY_PREFIX: jobsKeyPrefix,
  });
  try {
    await waitUntilListening(api, port);
  } catch (error) {
    await stopAll([api]);
    throw error;
  }
  return {
    port,
    api,
    accessToken: credentials.accessToken,
    scoreToken: credentials.scoreToken,
    stop: () => stopAll([api]),
  };
}
