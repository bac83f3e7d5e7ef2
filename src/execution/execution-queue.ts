import type { Agenda, Job } from 'agenda';
import type { Logger } from 'pino';
import type { ExecutionSettings } from './execution-settings.js';
import { createAgenda } from './job-store.js';

export const RUN_JOB = 'execution.run';
export const CHUNK_JOB = 'execution.batch-chunk';
export const CALLBACK_JOB = 'execution.callback';
/** How long a stopping worker waits for the jobs it runs (chunks hand their rest back within one flush). */
const DRAIN_TIMEOUT_MS = 20_000;

/** One job per group of async runs submitted together (see AsyncSubmissions). */
export interface RunJobData { resultIds: string[] }
/** Elements with element_index in [from, to) of one batch. */
export interface ChunkJobData { batchId: string; from: number; to: number }
export interface CallbackJobData { resultId: string; attempt: number }

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
 * store holds only pending work. The Agenda instance is created on first use: processes that
 * never enqueue (other features' tests) open no job-store connection.
 */
export class ExecutionQueue {
  private agenda?: Promise<Agenda>;
  private processing = false;
  private stopping = false;
  /** Handlers running now: a stopping worker waits for them (Agenda's drain does not count them reliably). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private channel?: Promise<void>;

  constructor(private readonly jobsUrl: string, private readonly settings: ExecutionSettings, private readonly logger: Logger) {}

  /**
   * One job for a group of async runs (AsyncSubmissions groups the runs submitted together):
   * few, full jobs keep the job store small, and its Redis backend slows sharply with many queued jobs.
   */
  async enqueueRuns(resultIds: string[]): Promise<void> {
    const agenda = await this.forEnqueue();
    await agenda.now<RunJobData>(RUN_JOB, { resultIds });
  }

  /** One job per chunk of `chunkSize` elements (never one per element: the store slows with many queued jobs). */
  async enqueueChunks(batchId: string, total: number, chunkSize: number): Promise<void> {
    const agenda = await this.forEnqueue();
    const pending: Promise<unknown>[] = [];
    for (let from = 0; from < total; from += chunkSize) pending.push(agenda.now<ChunkJobData>(CHUNK_JOB, { batchId, from, to: Math.min(from + chunkSize, total) }));
    await Promise.all(pending);
  }

  /** One chunk job (the stalled-work sweeper queues chunks of stalled batches again). */
  async enqueueChunk(chunk: ChunkJobData): Promise<void> {
    const agenda = await this.forEnqueue();
    await agenda.now<ChunkJobData>(CHUNK_JOB, chunk);
  }

  /** A callback attempt, now or after `delaySeconds` (a delayed job, never a sleep). */
  async scheduleCallback(resultId: string, attempt: number, delaySeconds: number): Promise<void> {
    const agenda = await this.forEnqueue();
    if (delaySeconds <= 0) await agenda.now<CallbackJobData>(CALLBACK_JOB, { resultId, attempt });
    else await agenda.schedule<CallbackJobData>(new Date(Date.now() + delaySeconds * 1000), CALLBACK_JOB, { resultId, attempt });
  }

  /** Defines the job handlers and starts taking jobs (the worker role). */
  async startProcessing(handlers: JobHandlers): Promise<void> {
    const agenda = await this.instance();
    const lockLifetime = this.settings.lockLifetimeMs;
    const onFailure = (name: string) => (error: Error, job: Job) => this.logger.error({ err: error, job: name, data: job.attrs.data }, 'job failed');
    agenda.define<RunJobData>(RUN_JOB, (job) => this.track(handlers.run(job.attrs.data, async () => void (await job.touch()))), {
      concurrency: this.settings.runConcurrency, lockLimit: this.settings.runConcurrency, lockLifetime,
    });
    agenda.define<ChunkJobData>(CHUNK_JOB, (job) => this.track((async () => {
      const done = await handlers.chunk(job.attrs.data, async () => void (await job.touch()), () => this.stopping);
      // A started job is never run again once unlocked, so a stopping worker hands the rest of its
      // chunk back as a new job, runnable at once by any worker (finished elements are skipped).
      if (!done) await agenda.now<ChunkJobData>(CHUNK_JOB, job.attrs.data);
    })()), {
      concurrency: this.settings.chunkConcurrency, lockLimit: this.settings.chunkConcurrency, lockLifetime,
    });
    agenda.define<CallbackJobData>(CALLBACK_JOB, (job) => this.track(handlers.callback(job.attrs.data)), {
      concurrency: this.settings.callbackConcurrency, lockLimit: this.settings.callbackConcurrency, lockLifetime,
    });
    for (const name of [RUN_JOB, CHUNK_JOB, CALLBACK_JOB]) {
      agenda.on(`fail:${name}`, onFailure(name));
      refillOnCompletion(agenda, name);
    }
    if (this.channel) {
      // start() connects the channel itself; hand it over rather than subscribing twice.
      await this.channel;
      await channelOf(agenda)?.disconnect();
      this.channel = undefined;
    }
    this.processing = true;
    await agenda.start();
    this.logger.info({ keyPrefix: this.settings.keyPrefix, runConcurrency: this.settings.runConcurrency, chunkConcurrency: this.settings.chunkConcurrency }, 'execution worker started');
  }

  /**
   * Stops taking jobs and lets the running ones end: async runs and callbacks finish, batch chunks
   * stop after their current flush and hand the rest back as new jobs. Then closes the job store.
   * (Agenda's stop() would unlock running jobs into a state no worker runs again.)
   */
  async close(): Promise<void> {
    if (!this.agenda) return;
    const agenda = await this.agenda;
    this.agenda = undefined;
    if (this.processing) {
      this.processing = false;
      this.stopping = true;
      // drain() with no wait: stop taking jobs, keep the connection for the hand-backs.
      await agenda.drain({ timeout: 1, closeConnection: false });
      const deadline = Date.now() + DRAIN_TIMEOUT_MS;
      while (this.inFlight.size > 0 && Date.now() < deadline) {
        await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((resolve) => setTimeout(resolve, deadline - Date.now()).unref())]);
      }
      if (this.inFlight.size > 0) this.logger.warn({ running: this.inFlight.size }, 'jobs still running after the drain time-out; their locks expire and another worker takes them');
      await backendOf(agenda).disconnect();
      return;
    }
    if (this.channel) {
      await this.channel.catch(() => undefined);
      await channelOf(agenda)?.disconnect();
    }
    this.channel = undefined;
    await backendOf(agenda).disconnect();
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  /** Pending jobs in the store, by name (benchmarks and tests check the store does not grow). */
  async pendingJobs(): Promise<number> {
    const agenda = await this.instance();
    const { total } = await agenda.queryJobs({});
    return total;
  }

  private instance(): Promise<Agenda> {
    this.agenda ??= createAgenda(this.jobsUrl, {
      concurrency: this.settings.runConcurrency,
      lockLifetimeMs: this.settings.lockLifetimeMs,
      processEveryMs: this.settings.processEveryMs,
    }, this.settings.keyPrefix).then(async (agenda) => {
      agenda.on('error', (error: Error) => this.logger.error({ err: error }, 'job store error'));
      await agenda.ready;
      return agenda;
    });
    return this.agenda;
  }

  /** An enqueue-only process must connect the notification channel, or workers learn of its jobs only when they poll. */
  private async forEnqueue(): Promise<Agenda> {
    const agenda = await this.instance();
    if (!this.processing) {
      this.channel ??= channelOf(agenda)?.connect() ?? Promise.resolve();
      await this.channel;
    }
    return agenda;
  }
}

interface ProcessorInternals {
  isRunning: boolean;
  jobStatus: Record<string, { locked: number } | undefined>;
  handleNotification(notification: { jobName: string }): Promise<void>;
}

/**
 * Agenda locks new jobs only on a notification or a poll: when a burst of notifications arrives
 * while this process is at its lock limit, the jobs behind it wait for the next poll (seconds).
 * So when a job completes (and its lock is released), this process looks for the next job of
 * that name at once, through the processor's own notification path.
 */
function refillOnCompletion(agenda: Agenda, name: string): void {
  agenda.on(`complete:${name}`, () => {
    let tries = 0;
    const attempt = (): void => {
      const processor = (agenda as unknown as { jobProcessor?: ProcessorInternals }).jobProcessor;
      if (!processor?.isRunning) return;
      const limit = agenda.definitions[name]?.lockLimit ?? 0;
      if (limit > 0 && (processor.jobStatus[name]?.locked ?? 0) >= limit && tries < 25) {
        tries += 1;
        setTimeout(attempt, 2);
        return;
      }
      processor.handleNotification({ jobName: name }).catch(() => undefined);
    };
    setImmediate(attempt);
  });
}

interface Connectable { connect(): Promise<void>; disconnect(): Promise<void> }

function channelOf(agenda: Agenda): Connectable | undefined {
  return (agenda as unknown as { notificationChannel?: Connectable }).notificationChannel;
}

function backendOf(agenda: Agenda): Connectable {
  return (agenda as unknown as { backend: Connectable }).backend;
}
