import type { Logger } from 'pino';
import { BatchedSweeper, daysBefore, type BatchedSweepOptions } from '../db/periodic-sweep.js';
import type { LiveTestRuns } from './live-test-runs.js';

export interface LiveTestRetentionOptions extends BatchedSweepOptions {
  /** LIVE_TEST_RUNS_RETENTION_DAYS: how long after it was stored a shadow or split run is kept. */
  retentionDays: number;
}

/**
 * Deletes shadow and split runs stored more than LIVE_TEST_RUNS_RETENTION_DAYS ago, whatever their test's state,
 * oldest first, at most `batchSize` per statement with a pause between statements. Runs in worker processes, as
 * the decision records' sweep does; several workers sweeping at once only repeat deletes that find nothing.
 * Reports stay whole: a report folds runs in id order from a cursor that never goes back, so a deleted run is
 * either folded already (and stays counted there) or never read; a report folded anew counts the runs kept
 * (docs/live-tests.md, "Retention").
 */
export class LiveTestRetentionSweeper extends BatchedSweeper {
  constructor(
    private readonly tables: readonly Pick<LiveTestRuns<unknown, unknown>, 'deleteStoredBefore'>[],
    private readonly options: LiveTestRetentionOptions,
    logger: Logger,
  ) {
    super(options, 'live test run', logger);
  }

  /** One sweep of every runs table; answers how many runs it deleted. */
  async sweepOnce(now: Date = new Date()): Promise<number> {
    const cutoff = daysBefore(now, this.options.retentionDays);
    let deleted = 0;
    for (const runs of this.tables) {
      deleted += await this.deleteInBatches((limit) => runs.deleteStoredBefore(cutoff, limit));
      if (this.stopped) break;
    }
    if (deleted > 0) this.logger.info({ deleted }, 'deleted expired shadow and split runs');
    return deleted;
  }
}
