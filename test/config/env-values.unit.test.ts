import { loadConfig } from '../../src/config/config.js';
import { loadExecutionSettings } from '../../src/execution/execution-settings.js';

// One reader of environment variables (src/config/env-values.ts) for AppConfig and the execution settings.
describe('environment variables', () => {
  const config = loadConfig({ APP_ENV: 'test' });

  it('reads integers with the same rule in both, a lower bound where the setting has one', () => {
    expect(() => loadConfig({ APP_ENV: 'test', LIMIT_RUN_TIMEOUT_MS: '-1' })).toThrow(
      'LIMIT_RUN_TIMEOUT_MS must be a non-negative integer, got "-1"',
    );
    expect(() => loadExecutionSettings(config, { JOB_LOCK_LIFETIME_MS: '99' })).toThrow(
      'JOB_LOCK_LIFETIME_MS must be an integer ≥ 100, got "99"',
    );
    expect(() => loadExecutionSettings(config, { WORKER_CHUNK_CONCURRENCY: '2.5' })).toThrow(
      'WORKER_CHUNK_CONCURRENCY must be an integer ≥ 1, got "2.5"',
    );
    expect(loadExecutionSettings(config, { WORKER_CHUNK_CONCURRENCY: '', JOB_POLL_MS: '250' })).toMatchObject({
      chunkConcurrency: 4,
      processEveryMs: 250,
    });
  });

  it('reads booleans with the same rule in both', () => {
    expect(() => loadConfig({ APP_ENV: 'test', VALIDATE_RESPONSES: 'yes' })).toThrow(
      'VALIDATE_RESPONSES must be true or false, got "yes"',
    );
    expect(() => loadExecutionSettings(config, { RUN_WORKER: 'no' })).toThrow(
      'RUN_WORKER must be true or false, got "no"',
    );
    expect(loadExecutionSettings(config, { RUN_WORKER: 'false' }).workerInApiProcess).toBe(false);
  });
});
