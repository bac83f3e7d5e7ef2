import type { Logger } from 'pino';
import type { ShadowRun } from './shadow.js';
import type { MySqlShadowStore } from './shadow-store.js';

export interface ShadowRunWriterOptions {
  /** How often buffered runs and skip counts are written. */
  flushMs: number;
  /** Most runs held while MySQL is slow or down; past it the newest are dropped and counted. */
  maxBuffered: number;
  /** Runs dropped (buffer full). */
  onDropped: (count: number) => void;
}

/**
 * Shadow runs are written behind the live path, in bulk: buffered in memory, inserted every `flushMs`
 * (one statement per 200 runs), with the shadows' budget skips added to their counts. A write that
 * fails keeps the runs for the next one, within `maxBuffered`.
 */
export class ShadowRunWriter {
  private buffer: ShadowRun[] = [];
  private skipped = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  /** Closed with its process: shadow runs still ending (the engine is disposed after) are not written. */
  private closed = false;

  constructor(
    private readonly store: MySqlShadowStore,
    private readonly options: ShadowRunWriterOptions,
    private readonly logger: Logger,
  ) {}

  add(run: ShadowRun): void {
    if (this.closed) return;
    if (this.buffer.length >= this.options.maxBuffered) {
      this.options.onDropped(1);
      return;
    }
    this.buffer.push(run);
    this.schedule();
  }

  skip(shadowId: string): void {
    if (this.closed) return;
    this.skipped.set(shadowId, (this.skipped.get(shadowId) ?? 0) + 1);
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
    const skipped = this.skipped;
    this.buffer = [];
    this.skipped = new Map();
    if (runs.length === 0 && skipped.size === 0) return;
    try {
      if (runs.length > 0) await this.store.insertRuns(runs);
    } catch (error) {
      this.logger.warn({ err: error, runs: runs.length }, 'shadow runs not written; kept for the next write');
      const room = Math.max(0, this.options.maxBuffered - this.buffer.length);
      if (runs.length > room) this.options.onDropped(runs.length - room);
      this.buffer = [...runs.slice(0, room), ...this.buffer];
      this.schedule();
    }
    try {
      if (skipped.size > 0) await this.store.addSkipped(skipped);
    } catch (error) {
      this.logger.warn({ err: error }, 'shadow skip counts not written; kept for the next write');
      for (const [id, count] of skipped) this.skipped.set(id, (this.skipped.get(id) ?? 0) + count);
      this.schedule();
    }
  }
}
