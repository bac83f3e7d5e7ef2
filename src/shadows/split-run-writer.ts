import type { Logger } from 'pino';
import type { SplitRunSink } from './live-splits.js';
import type { SplitRun } from './split.js';
import type { MySqlSplitStore } from './split-store.js';

export interface SplitRunWriterOptions {
  flushMs: number;
  /** Most runs held while MySQL is slow or down; past it the newest are dropped and counted. */
  maxBuffered: number;
  onDropped: (count: number) => void;
}

/**
 * Split runs are written behind the live path, in bulk, as shadow runs are (ShadowRunWriter): buffered,
 * inserted every `flushMs`; a write that fails keeps the runs for the next one, within `maxBuffered`.
 */
export class SplitRunWriter implements SplitRunSink {
  private buffer: SplitRun[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly store: MySqlSplitStore,
    private readonly options: SplitRunWriterOptions,
    private readonly logger: Logger,
  ) {}

  add(run: SplitRun): void {
    if (this.closed) return;
    if (this.buffer.length >= this.options.maxBuffered) {
      this.options.onDropped(1);
      return;
    }
    this.buffer.push(run);
    this.schedule();
  }

  /** Writes what is buffered now (tests, and close). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => undefined);
    }, this.options.flushMs);
    this.timer.unref();
  }

  private async write(): Promise<void> {
    const runs = this.buffer;
    this.buffer = [];
    if (runs.length === 0) return;
    try {
      await this.store.insertRuns(runs);
    } catch (error) {
      this.logger.warn({ err: error, runs: runs.length }, 'split runs not written; kept for the next write');
      const room = Math.max(0, this.options.maxBuffered - this.buffer.length);
      if (runs.length > room) this.options.onDropped(runs.length - room);
      this.buffer = [...runs.slice(0, room), ...this.buffer];
      this.schedule();
    }
  }
}
