/** The event loop gets a turn at least this often between pages. */
const YIELD_EVERY_MS = 20;

/**
 * At most `size` runs in flight, across any number of callers: `run` waits for a free place, in call
 * order. A replay dispatches every record of a page through one window and moves on to the next page
 * while the last runs of the previous one are still in flight, so the engine pool, which batches the
 * runs that queue up, never runs half empty at page ends.
 */
export class RunWindow {
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly dispatchWatchers: Array<() => void> = [];
  private lastYield = performance.now();

  constructor(private readonly size: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.inFlight < this.size && this.waiting.length === 0) this.inFlight += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  /** Resolves once every run asked for so far has started. */
  async dispatched(): Promise<void> {
    if (this.waiting.length > 0) await new Promise<void>((resolve) => this.dispatchWatchers.push(resolve));
    // Answers that arrive together settle their runs through microtasks: timers, signals and I/O get a turn.
    if (performance.now() - this.lastYield >= YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      this.lastYield = performance.now();
    }
  }

  private release(): void {
    const next = this.waiting.shift();
    if (!next) {
      this.inFlight -= 1;
      return;
    }
    // The place goes straight to the next run.
    next();
    if (this.waiting.length === 0) for (const watcher of this.dispatchWatchers.splice(0)) watcher();
  }
}
