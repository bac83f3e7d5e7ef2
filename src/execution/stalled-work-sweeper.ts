import type { Logger } from 'pino';
import { PeriodicSweep } from '../db/periodic-sweep.js';
import type { Metrics } from '../metrics/metrics.js';
import {
  CALLBACK_JOB,
  CHUNK_JOB,
  RUN_JOB,
  type CallbackJobData,
  type ChunkJobData,
  type ExecutionQueue,
  type PendingJob,
  type RunJobData,
} from './execution-queue.js';
import type { BatchStore, ChunkRange } from './batch-store.js';
import type { RunResultStore } from './run-result-store.js';

const BATCH_OF_WORK = 1000;
const RUNS_PER_JOB = 200;
/** Without candidates, the job store is still listed every this many sweeps, for finished jobs left in it. */
const LEFTOVER_CHECK_EVERY = 12;

/** The jobs still to run in the job store, listed at most once per sweep and only when some work needs them. */
export type PendingJobs = () => Promise<PendingJob[]>;

/** Stored work of another feature whose jobs can be lost the same way (replays). */
export interface StalledWorkSource {
  /** The key of its count in sweepOnce's answer, and the `kind` of its recovered-work metric. */
  name: string;
  /**
   * Queues again (once, across sweepers) at most `limit` of its items unfinished since before `cutoff`
   * that no pending job covers (`pending`); answers how many.
   */
  requeueStalled(cutoff: Date, limit: number, pending: PendingJobs): Promise<number>;
}

/** What one sweep queued again: async runs, batch chunks, callbacks, and each source's items under its name. */
export type SweepCounts = { runs: number; chunks: number; callbacks: number } & Record<string, number>;

/**
 * Recovery of stored work that has no job to finish it (docs/execution.md, "Recovery"):
 *
 * - an API process that dies between committing a run (or a batch) and saving its job leaves it QUEUED
 *   with no job;
 * - a job store that comes back empty (Redis without persistence) has lost every pending job: queued
 *   runs and chunks, scheduled callback retries, replays; work a dead worker was RUNNING too.
 *
 * Every worker sweeps every STALLED_WORK_SWEEP_SECONDS (5): work unfinished and queued longer than
 * STALLED_WORK_AFTER_SECONDS (10) ago is a candidate, and is queued again only when no pending job in
 * the job store covers it (jobsInStore), so work waiting behind a backlog is never queued twice, and a
 * job a dead worker still holds is left to Agenda's takeover at lock expiry (JOB_LOCK_LIFETIME_MS, 10 s).
 * A candidate is claimed first (its queued_at moves, so concurrent sweepers queue it once). Runs and
 * elements already finished are skipped by their jobs, results are written by result id, a callback
 * goes on with its next attempt: queuing twice is harmless, only wasteful. Each one queued again is
 * counted in `scoring_recovered_work_total{kind}`. The listing also removes finished jobs left in
 * the store (a worker killed between recording a job's completion and removing it).
 */
export class StalledWorkSweeper {
  private readonly periodic: PeriodicSweep;
  private readonly sources: StalledWorkSource[] = [];
  private sweeps = 0;

  constructor(
    private readonly runs: RunResultStore,
    private readonly batches: BatchStore,
    private readonly queue: ExecutionQueue,
    private readonly settings: { stalledAfterMs: number; sweepEveryMs: number },
    private readonly logger: Logger,
    private readonly metrics: Pick<Metrics, 'workRecovered'>,
  ) {
    // A sweep slower than the interval (a large backlog to list) is not overlapped by the next.
    this.periodic = new PeriodicSweep(
      () => this.sweepOnce(),
      settings.sweepEveryMs,
      (error) => this.logger.error({ err: error }, 'stalled-work sweep failed'),
    );
  }

  start(): void {
    this.periodic.start();
  }

  /** Sweeps another feature's work too (wired in src/services.ts). */
  addSource(source: StalledWorkSource): void {
    this.sources.push(source);
  }

  stop(): void {
    this.periodic.stop();
  }

  /** One sweep; answers how many runs, batch chunks, callbacks and items of each source it queued again. */
  async sweepOnce(): Promise<SweepCounts> {
    const cutoff = new Date(Date.now() - this.settings.stalledAfterMs);
    let listing: Promise<{ pending: PendingJob[]; removed: number }> | undefined;
    const list = () => (listing ??= this.queue.jobsInStore());
    const pending: PendingJobs = async () => (await list()).pending;
    const counts: SweepCounts = {
      runs: await this.requeueRuns(cutoff, pending),
      chunks: await this.requeueChunks(cutoff, pending),
      callbacks: await this.requeueCallbacks(cutoff, pending),
    };
    for (const source of this.sources)
      counts[source.name] = await source.requeueStalled(cutoff, BATCH_OF_WORK, pending);
    // The first sweep of a worker, and every LEFTOVER_CHECK_EVERY-th, lists the store even without candidates.
    if (this.sweeps % LEFTOVER_CHECK_EVERY === 0) await list();
    this.sweeps += 1;
    const removed = listing ? (await listing).removed : 0;
    if (removed > 0) this.logger.info({ removed }, 'removed finished jobs left in the job store');
    for (const [kind, count] of Object.entries(counts)) this.metrics.workRecovered(kind, count);
    if (Object.values(counts).some((count) => count > 0))
      this.logger.warn(counts, 'queued work again that had no job (recovered)');
    return counts;
  }

  private async requeueRuns(cutoff: Date, pending: PendingJobs): Promise<number> {
    const candidates = await this.runs.stalledRuns(cutoff, BATCH_OF_WORK);
    if (candidates.length === 0) return 0;
    const covered = new Set<string>();
    for (const job of await pending())
      if (job.name === RUN_JOB) for (const id of (job.data as RunJobData).resultIds ?? []) covered.add(id);
    const claimed: string[] = [];
    for (const id of candidates) {
      if (!covered.has(id) && (await this.runs.claimStalled(cutoff, id))) claimed.push(id);
    }
    for (let start = 0; start < claimed.length; start += RUNS_PER_JOB)
      await this.queue.enqueueRuns(claimed.slice(start, start + RUNS_PER_JOB));
    return claimed.length;
  }

  private async requeueChunks(cutoff: Date, pending: PendingJobs): Promise<number> {
    const candidates = await this.batches.stalledChunks(cutoff, BATCH_OF_WORK);
    if (candidates.length === 0) return 0;
    const jobs = (await pending()).filter((job) => job.name === CHUNK_JOB).map((job) => job.data as ChunkJobData);
    // A chunk job covers the parts whose first element lies in its range (BatchStore.chunkWork).
    const covered = (part: ChunkRange) =>
      jobs.some((job) => job.batchId === part.batchId && job.from <= part.from && part.from < job.to);
    let queued = 0;
    for (const part of candidates) {
      if (covered(part) || !(await this.batches.claimStalled(cutoff, part))) continue;
      await this.queue.enqueueChunk(part);
      queued += 1;
    }
    return queued;
  }

  private async requeueCallbacks(cutoff: Date, pending: PendingJobs): Promise<number> {
    const candidates = await this.runs.pendingCallbacks(cutoff, BATCH_OF_WORK);
    if (candidates.length === 0) return 0;
    const covered = new Set(
      (await pending()).filter((job) => job.name === CALLBACK_JOB).map((job) => (job.data as CallbackJobData).resultId),
    );
    let queued = 0;
    for (const { id, attempts } of candidates) {
      if (covered.has(id) || !(await this.runs.claimCallback(cutoff, id))) continue;
      // The next attempt at once: a retry scheduled for later was lost with its job.
      await this.queue.scheduleCallback(id, attempts + 1, 0);
      queued += 1;
    }
    return queued;
  }
}
