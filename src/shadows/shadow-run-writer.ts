import type { Logger } from 'pino';
import { BufferedRunWriter, type RunWriterOptions } from './buffered-run-writer.js';
import type { ShadowRun } from './shadow.js';
import type { MySqlShadowStore } from './shadow-store.js';

export interface ShadowRunWriterOptions extends RunWriterOptions {
  /** The API-side time of building each statement that writes the runs: charged to the shadows' budget. */
  onWriteMs: (ms: number) => void;
}

/**
 * Shadow runs written in bulk behind the live path (BufferedRunWriter), with the shadows' budget skips added to
 * their counts at each write. Writing is shadow work the API process does: the time spent building the statements
 * is reported (onWriteMs), so the budget charges it as it charges the runs themselves.
 */
export class ShadowRunWriter extends BufferedRunWriter<ShadowRun> {
  private skipped = new Map<string, number>();

  constructor(
    private readonly store: MySqlShadowStore,
    options: ShadowRunWriterOptions,
    logger: Logger,
  ) {
    super((runs) => store.insertRuns(runs, options.onWriteMs), options, logger, 'shadow runs');
  }

  skip(shadowId: string): void {
    if (!this.open) return;
    this.skipped.set(shadowId, (this.skipped.get(shadowId) ?? 0) + 1);
    this.schedule();
  }

  protected override async writeMore(): Promise<void> {
    const skipped = this.skipped;
    if (skipped.size === 0) return;
    this.skipped = new Map();
    try {
      await this.store.addSkipped(skipped);
    } catch (error) {
      this.logger.warn({ err: error }, 'shadow skip counts not written; kept for the next write');
      for (const [id, count] of skipped) this.skipped.set(id, (this.skipped.get(id) ?? 0) + count);
      this.schedule();
    }
  }
}
