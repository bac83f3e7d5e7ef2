import { randomUUID } from 'node:crypto';
import type { JobParameters, JobRepository } from 'agenda';
import type { ChainableCommander, Redis } from 'ioredis';

/**
 * The only place that reaches into @agendajs/redis-backend's repository (read in version 3.0.7,
 * `dist/RedisJobRepository.js`; package.json pins it exactly, and test/execution/redis-job-saves.test.ts
 * checks that a job saved here is stored exactly as the backend stores it).
 *
 * The backend saves a new job with five commands one after another (HSET of the job's hash, SADD to
 * the set of all jobs and to the set of its name, ZADD to the schedule, HGETALL to read it back):
 * five round trips for every group of async runs and every batch chunk. Here the same five commands
 * go out as one pipeline: one round trip. Only new plain jobs take this path (no id, not a `single`
 * job, no unique constraint: what `agenda.now()` and `agenda.schedule()` save); every other save is
 * the backend's own.
 */
export const REDIS_BACKEND_VERSION_RELIED_ON = '3.0.7';

/** What the backend's repository holds that is used here. */
interface RepositoryInternals {
  redis: Redis;
  key(suffix: string): string;
  jobToHash(job: Omit<JobParameters<unknown>, '_id'>, id: string, lastModifiedBy?: string): Record<string, string>;
  getJobScore(nextRunAt: Date | null, priority: number): number;
  hashToJob(hash: Record<string, string>): JobParameters;
  saveJob: JobRepository['saveJob'];
}

/** Makes the Redis backend's repository save new plain jobs in one round trip (see above). */
export function pipelineNewJobSaves(repository: JobRepository): void {
  const internals = repository as unknown as RepositoryInternals;
  const backendSave = internals.saveJob.bind(repository);
  internals.saveJob = async <DATA = unknown>(
    job: JobParameters<DATA>,
    options?: { lastModifiedBy?: string },
  ): Promise<JobParameters<DATA>> => {
    const { _id, unique, uniqueOpts: _uniqueOpts, ...props } = job;
    if (_id !== undefined || unique || props.type === 'single') return backendSave(job, options);
    const id = randomUUID();
    const jobKey = internals.key(`job:${id}`);
    const pipeline: ChainableCommander = internals.redis
      .pipeline()
      .hset(jobKey, internals.jobToHash(props, id, options?.lastModifiedBy))
      .sadd(internals.key('jobs:all'), id)
      .sadd(internals.key(`jobs:by_name:${props.name}`), id)
      .zadd(
        internals.key('jobs:by_next_run_at'),
        internals.getJobScore(props.nextRunAt ?? null, props.priority ?? 0),
        id,
      )
      .hgetall(jobKey);
    const replies = (await pipeline.exec()) ?? [];
    for (const [error] of replies) if (error) throw error;
    return internals.hashToJob(replies[4][1] as Record<string, string>) as JobParameters<DATA>;
  };
}
