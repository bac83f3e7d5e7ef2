import type { Logger } from 'pino';
import type { ExecutionQueue } from './execution-queue.js';
import type { BatchStore } from './batch-store.js';
import type { RunResultStore } from './run-result-store.js';

const BATCH_OF_WORK = 1000;
const RUNS_PER_JOB = 200;

/**
 * Queues again the work that was stored but never queued: an API process that dies between
 * committing a run (or a batch) and saving its job leaves it QUEUED (a chunk: never started) with
 * no job. Every worker sweeps now and then; work queued for longer than `stalledAfterMs` is claimed
 * (its queued_at moves, so concurrent sweepers queue it once) and queued. Work that was only waiting behind a
 * long backlog may so get a second job: harmless, since jobs skip finished runs and results are
 * written by run id.
 */
export class StalledWorkSweeper {
  private timer?: NodeJS.Timeout;

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

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sweep; answers how many runs and batch chunks it queued again. */
  async sweepOnce(): Promise<{ runs: number; chunks: number }> {
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
    if (runs + chunks > 0) this.logger.warn({ runs, chunks }, 'queued stalled work again');
    return { runs, chunks };
  }
}
