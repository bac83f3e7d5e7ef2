// Once per test run: a fresh test database with every migration applied (scripts/migrate.ts --fresh).
// Plain JavaScript because jest loads globalSetup outside its TypeScript module mapping.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function globalSetup() {
  // The suite's files share one database, but each has a job-store prefix of its own: a worker sweeping
  // for work without a job at the service's default (10 s) would queue other files' work into its own
  // store and run it there. Recovery tests set their own value (test/execution/recovery*.test.ts).
  process.env.STALLED_WORK_AFTER_SECONDS ??= '300';
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const env = { ...process.env, APP_ENV: 'test', NODE_ENV: 'test', NODE_OPTIONS: '' };
  env.DATABASE_URL ??= 'mysql://root@127.0.0.1:3306/scoring_test';
  env.JOBS_URL ??= 'redis://127.0.0.1:6379/1';
  execFileSync(`${root}node_modules/.bin/tsx`, ['scripts/migrate.ts', '--fresh'], { cwd: root, env, stdio: 'inherit' });
}
