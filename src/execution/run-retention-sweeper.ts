import type { Logger } from 'pino';
import type { BatchStore } from './batch-store.js';
import type { RunResultStore } from './run-result-store.js';
import { BatchedSweeper, daysBefore, type BatchedSweepOptions } from '../db/periodic-sweep.js';

export interface RunRetentionOptions extends BatchedSweepOptions {
  /** RUN_RESULTS_RETENTION_DAYS: how long after it finished an async run or a batch is kept. */
  retentionDays: number;
}

/**
 * Deletes finished async runs and finished batches (their elements' results and parts with them) once they
 * finished more than RUN_RESULTS_RETENTION_DAYS ago: results and errors may carry personal data derived from
 * the inputs, and were kept for ever. At most `batchSize` rows per statement with a pause between statements;
 * a batch's elements go in such statements before the batch row itself. Runs in worker processes; several
 * workers sweeping at once only repeat deletes that find nothing. An async run whose callback is still being
 * delivered is kept until delivery ends.
 */
export class RunRetentionSweeper extends BatchedSweeper {
  constructor(
    private readonly runs: RunResultStore,
    private readonly batches: BatchStore,
    private readonly options: RunRetentionOptions,
    logger: Logger,
  ) {
    super(options, 'run results', logger);
  }

  /** One sweep; answers how many async runs and batches it deleted. */
  async sweepOnce(now: Date = new Date()): Promise<{ runs: number; batches: number }> {
    const cutoff = daysBefore(now, this.options.retentionDays);
    const deleted = { runs: 0, batches: 0 };
    deleted.runs = await this.deleteInBatches((limit) => this.runs.deleteFinishedBefore(cutoff, limit));
    for (;;) {
      if (this.stopped) return deleted;
      const expired = await this.batches.finishedBefore(cutoff, 100);
      for (const batchId of expired) {
        await this.deleteInBatches((limit) => this.batches.deleteElements(batchId, limit));
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
}
