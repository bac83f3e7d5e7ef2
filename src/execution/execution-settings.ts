import type { AppConfig } from '../config/config.js';
import { readBoolean, readInt } from '../config/env-values.js';

/**
 * Job-processing settings that only the execution feature reads. They come from environment
 * variables (documented in docs/execution.md) rather than AppConfig because they tune Agenda,
 * not the API contract.
 */
export interface ExecutionSettings {
  /** Job-store key prefix: one per environment (and per test run), so deployments never see each other's jobs. */
  keyPrefix: string;
  /** A job held by a process that died is picked up again after this long (running jobs renew their lock every quarter of it). */
  lockLifetimeMs: number;
  /** Safety-net poll for due jobs; notifications normally wake workers at once. */
  processEveryMs: number;
  /** Async run jobs one worker process runs at once. */
  runConcurrency: number;
  /** Batch chunk jobs one worker process runs at once. */
  chunkConcurrency: number;
  /** Elements of one chunk (or runs of one job) in flight at once: up to a full engine batch (64), so they cross into the sandbox together. */
  elementConcurrency: number;
  /** Callback deliveries one worker process makes at once. */
  callbackConcurrency: number;
  /** Work unfinished this long after it was queued, and covered by no pending job, is queued again by the stalled-work sweeper. */
  stalledAfterMs: number;
  /** How often each worker runs the stalled-work sweeper. */
  sweepEveryMs: number;
  /** RUN_RESULTS_RETENTION_DAYS: finished async runs and batches are deleted this long after they finished. */
  resultRetentionDays: number;
  /** Starts of an async run before it is given up (RUN_ABANDONED) instead of being run again. */
  maxRunAttempts: number;
  /** Whether the API process also runs an execution worker (RUN_WORKER=false: run `npm run worker` processes instead). */
  workerInApiProcess: boolean;
}

export function loadExecutionSettings(config: AppConfig, env: NodeJS.ProcessEnv = process.env): ExecutionSettings {
  return {
    keyPrefix: env.JOBS_KEY_PREFIX || `scoring:${config.environment}:`,
    lockLifetimeMs: readInt(env, 'JOB_LOCK_LIFETIME_MS', 10_000, 100),
    processEveryMs: readInt(env, 'JOB_POLL_MS', 5_000, 10),
    runConcurrency: readInt(env, 'WORKER_RUN_CONCURRENCY', Math.max(config.workerConcurrency, 1), 1),
    chunkConcurrency: readInt(env, 'WORKER_CHUNK_CONCURRENCY', 4, 1),
    elementConcurrency: Math.max(Math.min(config.workerConcurrency, 64), 1),
    callbackConcurrency: readInt(env, 'WORKER_CALLBACK_CONCURRENCY', 32, 1),
    stalledAfterMs: readInt(env, 'STALLED_WORK_AFTER_SECONDS', 10, 1) * 1000,
    sweepEveryMs: readInt(env, 'STALLED_WORK_SWEEP_SECONDS', 5, 1) * 1000,
    maxRunAttempts: readInt(env, 'RUN_MAX_ATTEMPTS', 3, 1),
    resultRetentionDays: readInt(env, 'RUN_RESULTS_RETENTION_DAYS', 30, 1),
    workerInApiProcess: readBoolean(env, 'RUN_WORKER', true),
  };
}
