import { ConflictError } from '../errors/conflict-error.js';
import type { ExecutionQueue } from './execution-queue.js';
import { GroupCommit } from './group-commit.js';
import { jobStoreUnavailable } from './job-store-unavailable.js';
import type { NewAsyncRun, RunResultStore } from './run-result-store.js';

/** Most runs one group (one insert, one job) holds. */
const MAX_GROUP = 500;
/**
 * Under load, a group is committed at most every this many milliseconds per API process: at 1,600
 * submissions/s that is about 50 jobs of 32 runs, not 1,600 jobs of one. Each job costs about a
 * dozen job-store round trips (saved, notified, locked, its state saved, removed) and the Redis
 * backend scans every job of a name when it locks one: in a worker under sustained async load, that
 * bookkeeping took more CPU than the runs (docs/benchmarks.md), so fewer, fuller jobs keep the tail
 * short at the price of at most this much added latency. An idle service commits at once.
 */
const GROUP_INTERVAL_MS = 20;

/**
 * Stores async submissions and their jobs in groups: the runs submitted together are inserted with
 * one multi-row INSERT and carried by one job. `submit` resolves once the run's row and its job are
 * durable (so a 202 always means the work will run), or rejects with 409 REQUEST_ID_TAKEN (nothing
 * stored for that run) or 503 when the job store did not take the job (the group's rows are removed
 * again).
 */
export class AsyncSubmissions {
  private readonly groups: GroupCommit<NewAsyncRun, void>;

  constructor(
    private readonly store: RunResultStore,
    private readonly queue: ExecutionQueue,
  ) {
    // Up to 4 groups in flight: a slow insert or job save (a loaded database) delays a group, not the ones behind it.
    this.groups = new GroupCommit({
      maxItems: MAX_GROUP,
      concurrency: 4,
      minIntervalMs: GROUP_INTERVAL_MS,
      commit: (runs) => this.commit(runs),
    });
  }

  submit(run: NewAsyncRun): Promise<void> {
    return this.groups.submit(run);
  }

  private async commit(runs: NewAsyncRun[]): Promise<Array<undefined | Error>> {
    const stored = await this.store.insertAsyncRuns(runs);
    const ids = runs.filter((_, index) => stored[index]).map((run) => run.id);
    if (ids.length > 0) {
      try {
        await this.queue.enqueueRuns(ids);
      } catch (error) {
        // Nothing half-done: without their job the runs would stay QUEUED and block their request ids.
        await this.store.deleteRuns(ids);
        const failure = jobStoreUnavailable(error);
        const unavailable = failure instanceof Error ? failure : new Error(String(failure));
        return runs.map((run, index) => (stored[index] ? unavailable : requestIdTaken(run.requestId)));
      }
    }
    return runs.map((run, index) => (stored[index] ? undefined : requestIdTaken(run.requestId)));
  }
}

function requestIdTaken(requestId: string): ConflictError {
  return new ConflictError(
    `Request id "${requestId}" was already used; choose another X-SCE-RequestId.`,
    'REQUEST_ID_TAKEN',
    [{ path: 'header.X-SCE-RequestId', message: 'already used by this user' }],
  );
}
