import type { Logger } from 'pino';
import type { BatchStore } from './batch-store.js';
import type { RunResultStore } from './run-result-store.js';
import { PeriodicSweep } from '../db/periodic-sweep.js';

export interface RunRetentionOptions {
  /** RUN_RESULTS_RETENTION_DAYS: how long after it finished an async run or a batch is kept. */
  retentionDays: number;
  /** How often a sweep starts. */
  everyMs: number;
  /** Most rows one DELETE removes: short statements, short locks. */
  batchSize?: number;
  /** Pause between two DELETEs, so a large backlog never holds the database for long. */
  pauseMs?: number;
}

const DAY_MS = 86_400_000;

/**
 * Deletes finished async runs and finished batches (their elements' results and parts with them) once they
 * finished more than RUN_RESULTS_RETENTION_DAYS ago: results and errors may carry personal data derived from
 * the inputs, and were kept for ever. At most `batchSize` rows per statement with a pause between statements;
 * a batch's elements go in such statements before the batch row itself. Runs in worker processes; several
 * workers sweeping at once only repeat deletes that find nothing. An async run whose callback is still being
 * delivered is kept until delivery ends.
 */
export class RunRetentionSweeper {
  private readonly periodic: PeriodicSweep;
  private stopped = false;
  private readonly batchSize: number;
  private readonly pauseMs: number;

  constructor(
    private readonly runs: RunResultStore,
    private readonly batches: BatchStore,
    private readonly options: RunRetentionOptions,
    private readonly logger: Logger,
  ) {
    this.batchSize = options.batchSize ?? 5000;
    this.pauseMs = options.pauseMs ?? 100;
    this.periodic = new PeriodicSweep(() => this.sweepOnce(), options.everyMs, (error) => this.logger.error({ err: error }, 'run results retention sweep failed'));
  }

  start(): void {
    this.stopped = false;
    this.periodic.start();
  }

  stop(): void {
    this.stopped = true;
    this.periodic.stop();
  }

  /** One sweep; answers how many async runs and batches it deleted. */
  async sweepOnce(now: Date = new Date()): Promise<{ runs: number; batches: number }> {
    const cutoff = new Date(now.getTime() - this.options.retentionDays * DAY_MS);
    const deleted = { runs: 0, batches: 0 };
    for (;;) {
      if (this.stopped) return deleted;
      const removed = await this.runs.deleteFinishedBefore(cutoff, this.batchSize);
      deleted.runs += removed;
      if (removed < this.batchSize) break;
      await this.pause();
    }
    for (;;) {
      if (this.stopped) return deleted;
      const expired = await this.batches.finishedBefore(cutoff, 100);
      for (const batchId of expired) {
        while (!this.stopped && (await this.batches.deleteElements(batchId, this.batchSize)) === this.batchSize) await this.pause();
        if (this.stopped) return deleted;
        // Its parts go with it (ON DELETE CASCADE): one row per chunk of elements, few.
        await this.batches.deleteBatch(batchId);
        deleted.batches += 1;
      }
      if (expired.length < 100) break;
    }
    if (deleted.runs > 0 || deleted.batches > 0) this.logger.info(deleted, 'deleted expired async runs and batches');
    return deleted;
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, this.pauseMs));
  }
}
