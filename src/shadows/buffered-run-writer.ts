import type { Logger } from 'pino';

export interface RunWriterOptions {
  /** How often buffered runs are written. */
  flushMs: number;
  /** Most runs held while MySQL is slow or down; past it the newest are dropped and counted. */
  maxBuffered: number;
  /** Runs dropped (buffer full). */
  onDropped: (count: number) => void;
}

/**
 * Runs of a live test written behind the live path, in bulk: buffered in memory, inserted every `flushMs`. A write
 * that fails keeps the runs for the next one, within `maxBuffered`. Closed with its process: runs still ending
 * (the engine is disposed after) are not written. Shadow and split runs are written this way; a subclass may write
 * more with each flush (`writeMore`: the shadows' skip counts).
 */
export class BufferedRunWriter<Run> {
  private buffer: Run[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly insert: (runs: readonly Run[]) => Promise<void>,
    private readonly options: RunWriterOptions,
    protected readonly logger: Logger,
    /** What the runs are, in log lines (`shadow runs`). */
    private readonly what: string,
  ) {}

  add(run: Run): void {
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

  /** Whether add and writeMore's sources should still take anything. */
  protected get open(): boolean {
    return !this.closed;
  }

  protected schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => undefined);
    }, this.options.flushMs);
    this.timer.unref();
  }

  /** What a subclass writes with each flush, after the runs. */
  protected async writeMore(): Promise<void> {}

  private async write(): Promise<void> {
    const runs = this.buffer;
    this.buffer = [];
    if (runs.length > 0) {
      try {
        await this.insert(runs);
      } catch (error) {
        this.logger.warn({ err: error, runs: runs.length }, `${this.what} not written; kept for the next write`);
        const room = Math.max(0, this.options.maxBuffered - this.buffer.length);
        if (runs.length > room) this.options.onDropped(runs.length - room);
        this.buffer = [...runs.slice(0, room), ...this.buffer];
        this.schedule();
      }
    }
    await this.writeMore();
  }
}
