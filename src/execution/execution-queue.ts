import type { Agenda, BackoffStrategy, Job } from 'agenda';
import type { Logger } from 'pino';
import { isDatabaseUnavailable, safeErrorReason } from '../db/mysql-errors.js';
import { PortUnavailableError } from '../engine/errors/port-unavailable-error.js';
import { isProcessingJobs, lockedJobCount, lookForJobsNow } from './agenda-internals.js';
import type { ExecutionSettings } from './execution-settings.js';
import { createAgenda, openJobStore, type JobStore } from './job-store.js';
import { JobStoreUnavailableError } from './job-store-unavailable-error.js';

export const RUN_JOB = 'execution.run';
export const CHUNK_JOB = 'execution.batch-chunk';
export const CALLBACK_JOB = 'execution.callback';
/** How long a stopping worker waits for the jobs it runs (chunks hand their rest back within one flush). */
const DRAIN_TIMEOUT_MS = 20_000;
/** Longest wait between two tries of a job that failed because MySQL or the job store was unavailable. */
const OUTAGE_RETRY_MAX_MS = 10_000;

/**
 * A job that failed because MySQL or the job store was unavailable is tried again, 0.5 s, 1 s,
 * 2 s … (at most OUTAGE_RETRY_MAX_MS) later, for as long as the outage lasts: its handler is safe
 * to run again, and the work was accepted. Any other failure is final (it is logged).
 */
const retryWhileUnavailable: BackoffStrategy = ({ attempt, error }) => {
  if (
    !(error instanceof JobStoreUnavailableError) &&
    !(error instanceof PortUnavailableError) &&
    !isDatabaseUnavailable(error)
  )
    return null;
  return Math.min(500 * 2 ** Math.min(Math.max(attempt - 1, 0), 10), OUTAGE_RETRY_MAX_MS);
};

/** One job per group of async runs submitted together (see AsyncSubmissions). */
export interface RunJobData {
  resultIds: string[];
}
/** Elements with element_index in [from, to) of one batch. */
export interface ChunkJobData {
  batchId: string;
  from: number;
  to: number;
}
export interface CallbackJobData {
  resultId: string;
  attempt: number;
}

/** A job still to run (due, scheduled, running, or waiting for a retry after an outage): its name and data. */
export interface PendingJob {
  name: string;
  data: unknown;
}

/**
 * A job kind another feature runs on the execution worker (replays, src/replay/), through this
 * module's one Agenda. Like batch chunks, such a job stops early when the worker is stopping and is
 * handed back as a new job, runnable at once by any worker.
 */
export interface ResumableJobKind<T> {
  name: string;
  /** Jobs of this kind one worker process runs at once. */
  concurrency: number;
  /**
   * Runs the job: answers true when done; false when it stopped early because `stopping()` turned true
   * (it is queued again, runnable at once); a number of milliseconds when it cannot run yet (it is
   * queued again to run that much later, and the worker's slot goes to other jobs meanwhile).
   */
  run(data: T, keepAlive: () => Promise<void>, stopping: () => boolean): Promise<boolean | number>;
}

export interface JobHandlers {
  /** Runs a job's async runs; `keepAlive` renews the job's lock (call it at least every lock lifetime). */
  run(data: RunJobData, keepAlive: () => Promise<void>): Promise<void>;
  /**
   * Runs a chunk's unfinished elements; answers false when it stopped early because the worker is
   * stopping (`stopping()` turned true), true when the chunk is done.
   */
  chunk(data: ChunkJobData, keepAlive: () => Promise<void>, stopping: () => boolean): Promise<boolean>;
  callback(data: CallbackJobData): Promise<void>;
}

/**
 * The execution feature's only contact with Agenda. Jobs carry ids only (the run_results row
 * holds inputs and outcome), finished jobs are removed at once (`removeOnComplete`) so the job
 * store holds only pending work. The job store is opened on first use: processes that never
 * enqueue (other features' tests) open no job-store connection.
 *
 * Outages (docs/execution.md, "Outages"): while the job store is unreachable, every enqueue fails
 * at once with JobStoreUnavailableError (the API answers 503) and the worker keeps running what
 * it holds; both reconnect by themselves. A job that fails because MySQL or the job store was
 * unavailable is retried (retryWhileUnavailable).
 */
export class ExecutionQueue {
  private opened?: Promise<{ agenda: Agenda; store: JobStore }>;
  private processing = false;
  private stopping = false;
  /** Handlers running now: a stopping worker waits for them (Agenda's drain does not count them reliably). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private channel?: Promise<void>;
  private storeLost = false;
  /** Job kinds of other features, defined with execution's own when this process starts processing. */
  private readonly otherKinds: ResumableJobKind<never>[] = [];

  constructor(
    private readonly jobsUrl: string,
    private readonly settings: ExecutionSettings,
    private readonly logger: Logger,
  ) {}

  /**
   * One job for a group of async runs (AsyncSubmissions groups the runs submitted together): few,
   * full jobs keep the job store small, and its Redis backend slows sharply with many queued jobs.
   * Rejects with JobStoreUnavailableError when the job store does not take it.
   */
  async enqueueRuns(resultIds: string[]): Promise<void> {
    await this.save(async (agenda) => {
      await agenda.now<RunJobData>(RUN_JOB, { resultIds });
    });
  }

  /** One job per chunk of `chunkSize` elements (never one per element: the store slows with many queued jobs). */
  async enqueueChunks(batchId: string, total: number, chunkSize: number): Promise<void> {
    await this.save(async (agenda) => {
      const pending: Promise<unknown>[] = [];
      for (let from = 0; from < total; from += chunkSize)
        pending.push(agenda.now<ChunkJobData>(CHUNK_JOB, { batchId, from, to: Math.min(from + chunkSize, total) }));
      await Promise.all(pending);
    });
  }

  /** One chunk job (the stalled-work sweeper queues chunks of stalled batches again). */
  async enqueueChunk(chunk: ChunkJobData): Promise<void> {
    await this.save(async (agenda) => {
      await agenda.now<ChunkJobData>(CHUNK_JOB, chunk);
    });
  }

  /** Adds a job kind of another feature; call before startProcessing (every process registers, workers run them). */
  registerJobKind<T>(kind: ResumableJobKind<T>): void {
    if (this.processing) throw new Error(`job kind ${kind.name} registered after the worker started`);
    this.otherKinds.push(kind as ResumableJobKind<never>);
  }

  /** One job of a registered kind, runnable at once. Rejects with JobStoreUnavailableError when the job store does not take it. */
  async enqueue<T>(name: string, data: T): Promise<void> {
    await this.save(async (agenda) => {
      await agenda.now(name, data);
    });
  }

  /** A callback attempt, now or after `delaySeconds` (a delayed job, never a sleep). */
  async scheduleCallback(resultId: string, attempt: number, delaySeconds: number): Promise<void> {
    await this.save(async (agenda) => {
      if (delaySeconds <= 0) await agenda.now<CallbackJobData>(CALLBACK_JOB, { resultId, attempt });
      else
        await agenda.schedule<CallbackJobData>(new Date(Date.now() + delaySeconds * 1000), CALLBACK_JOB, {
          resultId,
          attempt,
        });
    });
  }

  /** Defines the job handlers and starts taking jobs (the worker role). */
  async startProcessing(handlers: JobHandlers): Promise<void> {
    const { agenda, store } = await this.instance();
    const lockLifetime = this.settings.lockLifetimeMs;
    const backoff = retryWhileUnavailable;
    const onFailure = (name: string) => (error: Error, job: Job) => {
      const retryInMs = backoff({ attempt: job.attrs.failCount ?? 1, error, jobName: name, jobData: job.attrs.data });
      if (retryInMs !== null) {
        this.logger.warn(
          { reason: safeErrorReason(error), job: name, data: job.attrs.data, retryInMs },
          'job failed because a dependency is unavailable; it is tried again',
        );
        return;
      }
      // Removed already, as its handler failed (finishing): what it left unfinished in MySQL is the
      // stalled-work sweeper's (it finds work no pending job covers).
      this.logger.error({ err: error, job: name, data: job.attrs.data }, 'job failed');
    };
    agenda.define<RunJobData>(
      RUN_JOB,
      (job) => this.track(this.finishing(agenda, job, () => handlers.run(job.attrs.data, () => this.keepAlive(job)))),
      {
        concurrency: this.settings.runConcurrency,
        lockLimit: this.settings.runConcurrency,
        lockLifetime,
        backoff,
      },
    );
    this.defineResumable<ChunkJobData>(agenda, {
      name: CHUNK_JOB,
      concurrency: this.settings.chunkConcurrency,
      run: (data, keepAlive, stopping) => handlers.chunk(data, keepAlive, stopping),
    });
    for (const kind of this.otherKinds) this.defineResumable(agenda, kind);
    agenda.define<CallbackJobData>(
      CALLBACK_JOB,
      (job) => this.track(this.finishing(agenda, job, () => handlers.callback(job.attrs.data))),
      {
        concurrency: this.settings.callbackConcurrency,
        lockLimit: this.settings.callbackConcurrency,
        lockLifetime,
        backoff,
      },
    );
    for (const name of this.jobNames()) {
      agenda.on(`fail:${name}`, onFailure(name));
      refillOnCompletion(agenda, name);
    }
    if (this.channel) {
      // start() connects the channel itself; hand it over rather than subscribing twice.
      await this.channel;
      await store.notifications?.disconnect();
      this.channel = undefined;
    }
    this.processing = true;
    await agenda.start();
    this.logger.info(
      {
        keyPrefix: this.settings.keyPrefix,
        runConcurrency: this.settings.runConcurrency,
        chunkConcurrency: this.settings.chunkConcurrency,
      },
      'execution worker started',
    );
  }

  /**
   * Defines a job that may stop early (batch chunks, other features' kinds). Scenario code runs on the
   * engine's workers, so this event loop is free and Agenda's lock check fires on time: the lock is
   * renewed by the clock as well, not only when the job calls keepAlive (a slow flush would lose it).
   * A started job is never run again once unlocked, so a stopping worker hands the rest of the job
   * back as a new job, runnable at once by any worker (a chunk skips its finished elements).
   */
  private defineResumable<T>(agenda: Agenda, kind: ResumableJobKind<T>): void {
    const lockLifetime = this.settings.lockLifetimeMs;
    agenda.define<T>(
      kind.name,
      (job) =>
        this.track(
          this.finishing(agenda, job, async () => {
            const renew = setInterval(() => void this.keepAlive(job), Math.max(50, Math.floor(lockLifetime / 3)));
            let done: boolean | number;
            try {
              done = await kind.run(
                job.attrs.data,
                () => this.keepAlive(job),
                () => this.stopping,
              );
            } finally {
              clearInterval(renew);
            }
            if (done === false) await agenda.now<T>(kind.name, job.attrs.data);
            else if (typeof done === 'number')
              await agenda.schedule<T>(new Date(Date.now() + done), kind.name, job.attrs.data);
          }),
        ),
      {
        concurrency: kind.concurrency,
        lockLimit: kind.concurrency,
        lockLifetime,
        backoff: retryWhileUnavailable,
      },
    );
  }

  /**
   * Runs a job's handler and removes the job from the store as the handler ends, when it succeeded or
   * failed for good (a failure retried after an outage keeps its job). Agenda records a completion and
   * only then removes the job, two round trips later: a worker that died or stopped between them left
   * the finished job in the store until a sweep (issue 27, problem 6). Removed first, the job is never
   * in the store finished: a worker that dies before the removal leaves it locked, and another worker
   * runs it again once its lock expires (every handler skips finished work). Agenda's own bookkeeping
   * after the handler then finds no job, which it ignores; and a job failed for good is no longer
   * removed from the failure event, which raced that bookkeeping and could write the job back.
   */
  private async finishing(agenda: Agenda, job: Job, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      const retried =
        retryWhileUnavailable({
          attempt: (job.attrs.failCount ?? 0) + 1,
          error: error as Error,
          jobName: job.attrs.name,
          jobData: job.attrs.data,
        }) !== null;
      if (!retried) await this.remove(agenda, job);
      throw error;
    }
    await this.remove(agenda, job);
  }

  private async remove(agenda: Agenda, job: Job): Promise<void> {
    try {
      await agenda.cancel({ id: job.attrs._id });
    } catch (error) {
      // Agenda records the completion and tries its own removal next; a job left finished by both is removed by the next sweep.
      this.logger.warn({ err: error, job: job.attrs.name }, 'could not remove a finished job; it is removed later');
    }
  }

  /** Every job name this process defines. */
  private jobNames(): string[] {
    return [RUN_JOB, CHUNK_JOB, CALLBACK_JOB, ...this.otherKinds.map((kind) => kind.name)];
  }

  /**
   * Stops taking jobs and lets the running ones end: async runs and callbacks finish, batch chunks
   * stop after their current flush and hand the rest back as new jobs. Then closes the job store.
   * (Agenda's stop() would unlock running jobs into a state no worker runs again.)
   */
  async close(): Promise<void> {
    if (!this.opened) return;
    const opened = this.opened;
    this.opened = undefined;
    const { agenda, store } = await opened.catch(() => ({ agenda: undefined, store: undefined }));
    if (!agenda || !store) return;
    if (this.processing) {
      this.processing = false;
      this.stopping = true;
      // drain() with no wait: stop taking jobs, keep the connection for the hand-backs.
      await agenda.drain({ timeout: 1, closeConnection: false });
      const deadline = Date.now() + DRAIN_TIMEOUT_MS;
      while (this.inFlight.size > 0 && Date.now() < deadline) {
        await Promise.race([
          Promise.allSettled([...this.inFlight]),
          new Promise((resolve) => setTimeout(resolve, deadline - Date.now()).unref()),
        ]);
      }
      if (this.inFlight.size > 0)
        this.logger.warn(
          { running: this.inFlight.size },
          'jobs still running after the drain time-out; their locks expire and another worker takes them',
        );
    } else if (this.channel) {
      await this.channel.catch(() => undefined);
    }
    this.channel = undefined;
    await store.close();
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  /**
   * Renews a running job's lock. When the job store is unreachable the job goes on (its results go
   * to MySQL); if the outage outlasts the lock, another worker may run the job again, which skips
   * finished runs and elements and writes by result id.
   */
  private async keepAlive(job: Job): Promise<void> {
    try {
      await job.touch();
    } catch (error) {
      this.logger.warn(
        { err: error, job: job.attrs.name },
        'could not renew a job lock (job store unavailable); the job goes on',
      );
    }
  }

  /** Jobs in the store, of every name or of `names` (benchmarks and tests check the store does not grow). */
  async pendingJobs(names?: string[]): Promise<number> {
    const { agenda } = await this.instance();
    const { total } = await agenda.queryJobs(names ? { names } : {});
    return total;
  }

  /**
   * Jobs due in the store (queued or running; delayed callback retries not yet due are not counted):
   * the metrics' queue depth. Uses the backend repository's public `getQueueSize` (one command on
   * Redis), never a listing of the jobs.
   */
  async dueJobs(): Promise<number> {
    const { store } = await this.instance();
    return store.backend.repository.getQueueSize();
  }

  /**
   * When the job store died between recording a job's completion and removing the job, the
   * finished job stays (unlocked, never run again). After each reconnection the worker removes
   * such leftovers, so the store keeps holding pending work only.
   */
  private async removeFinishedLeftovers(): Promise<void> {
    try {
      const { agenda } = await this.instance();
      const { jobs } = await agenda.queryJobs({ names: this.jobNames(), state: 'completed' });
      if (jobs.length === 0) return;
      const removed = await agenda.cancel({ ids: jobs.map((job) => job._id) });
      this.logger.info({ removed }, 'removed finished jobs left in the job store by its outage');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not look for finished jobs left by a job-store outage');
    }
  }

  /**
   * The jobs of this process's names still to run, for the stalled-work sweeper to tell work that has a
   * job from work that has none. Finished ones left in the store (a completion recorded but its removal
   * lost, a failure for good whose removal failed) are removed on the way: answers how many.
   */
  async jobsInStore(): Promise<{ pending: PendingJob[]; removed: number }> {
    const { agenda } = await this.instance();
    const { jobs } = await agenda.queryJobs({ names: this.jobNames() });
    const pending: PendingJob[] = [];
    const finished: string[] = [];
    for (const job of jobs) {
      // Still to run: locked by a worker, or due at some time (a retry after an outage included).
      if (job.lockedAt || job.nextRunAt) pending.push({ name: job.name, data: job.data });
      else finished.push(String(job._id));
    }
    const removed = finished.length > 0 ? await agenda.cancel({ ids: finished }) : 0;
    return { pending, removed };
  }

  /** Saves jobs through `work`, refusing at once while the job store is known to be unreachable. */
  private async save(work: (agenda: Agenda) => Promise<void>): Promise<void> {
    try {
      const agenda = await this.forEnqueue();
      await work(agenda);
    } catch (error) {
      if (error instanceof JobStoreUnavailableError) throw error;
      throw new JobStoreUnavailableError(`The job store did not save the job: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  private instance(): Promise<{ agenda: Agenda; store: JobStore }> {
    // A failed open is forgotten, so the next use tries again (the store may be back by then).
    this.opened ??= this.open().catch((error: unknown) => {
      this.opened = undefined;
      throw error;
    });
    return this.opened;
  }

  private async open(): Promise<{ agenda: Agenda; store: JobStore }> {
    const store = await openJobStore(this.jobsUrl, this.settings.keyPrefix, {
      onLost: (reason) => {
        this.storeLost = true;
        this.logger.error(
          { reason },
          'job store connection lost: async and batch submissions answer 503 until it returns; running jobs go on',
        );
      },
      onRestored: () => {
        this.storeLost = false;
        this.logger.warn('job store connection restored');
        if (this.processing) void this.removeFinishedLeftovers();
      },
      onError: (error) => this.logger.warn({ err: error }, 'job store client error'),
    });
    const agenda = createAgenda(store, {
      concurrency: this.settings.runConcurrency,
      lockLifetimeMs: this.settings.lockLifetimeMs,
      processEveryMs: this.settings.processEveryMs,
    });
    // Agenda's errors: job-store calls that failed, and jobs it could not run or record. During a
    // job-store outage every poll fails the same way; the lost/restored lines above say it once.
    agenda.on('error', (error: Error) => {
      if (this.storeLost) this.logger.debug({ err: error }, 'Agenda error during a job-store outage');
      else this.logger.error({ err: error }, 'Agenda error');
    });
    await agenda.ready;
    return { agenda, store };
  }

  /** An enqueue-only process must connect the notification channel, or workers learn of its jobs only when they poll. */
  private async forEnqueue(): Promise<Agenda> {
    const { agenda, store } = await this.instance();
    const reason = store.unavailableReason();
    if (reason) throw new JobStoreUnavailableError(reason);
    if (!this.processing && store.notifications) {
      this.channel ??= store.notifications.connect().catch((error: unknown) => {
        // The job is durable without it; workers find it at their next poll. Try again next time.
        this.channel = undefined;
        this.logger.warn({ err: error }, 'could not connect the job notification channel');
      });
      await this.channel;
    }
    return agenda;
  }
}

/**
 * Agenda locks new jobs only on a notification or a poll: when a burst of notifications arrives
 * while this process is at its lock limit, the jobs behind it wait for the next poll (seconds).
 * So when a job completes (and its lock is released), this process looks for the next job of that
 * name at once, through the processor's own notification path (agenda-internals.ts). It looks after
 * every job, not only when the process was at its lock limit: a notification can also be missed
 * below the limit (it arrives while the processor is between lock rounds), and looking only at the
 * limit left about one batch in three with a part waiting for the next poll (seconds).
 */
function refillOnCompletion(agenda: Agenda, name: string): void {
  agenda.on(`complete:${name}`, () => {
    let tries = 0;
    const attempt = (): void => {
      if (!isProcessingJobs(agenda)) return;
      const limit = agenda.definitions[name]?.lockLimit ?? 0;
      if (limit > 0 && (lockedJobCount(agenda, name) ?? 0) >= limit && tries < 25) {
        tries += 1;
        setTimeout(attempt, 2);
        return;
      }
      lookForJobsNow(agenda, name).catch(() => undefined);
    };
    setImmediate(attempt);
  });
}
