import type { Logger } from 'pino';
import type { ExecutionQueue } from './execution-queue.js';
import type { BatchStore } from './batch-store.js';
import type { RunResultStore } from './run-result-store.js';

const BATCH_OF_WORK = 1000;
const RUNS_PER_JOB = 200;

/** Stored work of another feature whose jobs can be lost the same way (replays). */
export interface StalledWorkSource {
  /** The key of its count in sweepOnce's answer. */
  name: string;
  /** Queues again (once, across sweepers) at most `limit` of its items stalled since before `cutoff`; answers how many. */
  requeueStalled(cutoff: Date, limit: number): Promise<number>;
}

/** What one sweep queued again: async runs, batch chunks, and each source's items under its name. */
export type SweepCounts = { runs: number; chunks: number } & Record<string, number>;

/**
 * Queues again the work that was stored but never queued: an API process that dies between
 * committing a run (or a batch) and saving its job leaves it QUEUED (a chunk: never started) with
 * no job, and a job store that restarts without its data (Redis without persistence) loses every
 * queued job. Other features add their own work as sources (replays). Every worker sweeps now and
 * then; work queued for longer than `stalledAfterMs` is claimed (its queued_at moves, so concurrent
 * sweepers queue it once) and queued. Work that was only waiting behind a long backlog may so get a
 * second job: harmless, since jobs skip finished runs and results are written by run id.
 */
export class StalledWorkSweeper {
  private timer?: NodeJS.Timeout;
  private readonly sources: StalledWorkSource[] = [];

  constructor(
    private readonly runs: RunResultStore,
    private readonly batches: BatchStore,
    private readonly queue: ExecutionQueue,
    private readonly settings: { stalledAfterMs: number; sweepEveryMs: number },
    private readonly logger: Logger,
  ) {}

  start(): void {
    const sweep = (): void => {
      this.sweepOnce().catch((error: unknown) => this.logger.error({ err: error }, 'stalled-work sweep failed'));
    };
    sweep();
    this.timer = setInterval(sweep, this.settings.sweepEveryMs);
    this.timer.unref();
  }

  /** Sweeps another feature's work too (wired in src/services.ts). */
  addSource(source: StalledWorkSource): void {
    this.sources.push(source);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sweep; answers how many runs, batch chunks and items of each source it queued again. */
  async sweepOnce(): Promise<SweepCounts> {
    const cutoff = new Date(Date.now() - this.settings.stalledAfterMs);
    const claimed: string[] = [];
    for (const id of await this.runs.stalledRuns(cutoff, BATCH_OF_WORK)) {
      if (await this.runs.claimStalled(cutoff, id)) claimed.push(id);
    }
    for (let start = 0; start < claimed.length; start += RUNS_PER_JOB) await this.queue.enqueueRuns(claimed.slice(start, start + RUNS_PER_JOB));
    const runs = claimed.length;
    let chunks = 0;
    for (const chunk of await this.batches.stalledChunks(cutoff, BATCH_OF_WORK)) {
      if (!(await this.batches.claimStalled(cutoff, chunk))) continue;
      await this.queue.enqueueChunk(chunk);
      chunks += 1;
    }
    const counts: SweepCounts = { runs, chunks };
    for (const source of this.sources) counts[source.name] = await source.requeueStalled(cutoff, BATCH_OF_WORK);
    if (Object.values(counts).some((count) => count > 0)) this.logger.warn(counts, 'queued stalled work again');
    return counts;
  }
}
