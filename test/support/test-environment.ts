/** Environment of every test process: the test database and job store, quiet logs. */
export function applyTestEnvironment(): void {
  process.env.APP_ENV = 'test';
  process.env.NODE_ENV = 'test';
  process.env.DATABASE_URL ??= 'mysql://root@127.0.0.1:3306/scoring_test';
  process.env.JOBS_URL ??= 'redis://127.0.0.1:6379/1';
  process.env.LOG_LEVEL ??= 'silent';
}
