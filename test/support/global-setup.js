// Once per test run: a fresh test database with every migration applied (scripts/migrate.ts --fresh).
// Plain JavaScript because jest loads globalSetup outside its TypeScript module mapping.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function globalSetup() {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const env = { ...process.env, APP_ENV: 'test', NODE_ENV: 'test', NODE_OPTIONS: '' };
  env.DATABASE_URL ??= 'mysql://root@127.0.0.1:3306/scoring_test';
  env.JOBS_URL ??= 'redis://127.0.0.1:6379/1';
  execFileSync(`${root}node_modules/.bin/tsx`, ['scripts/migrate.ts', '--fresh'], { cwd: root, env, stdio: 'inherit' });
}
