import type { Logger } from 'pino';
import { StaleWhileRevalidateCache } from '../db/stale-while-revalidate.js';

export interface LiveTestCacheOptions {
  /** How long a scenario's entry is used as read (then read again in the background). */
  freshMs: number;
  maxStaleMs: number;
}

/**
 * What the live path knows of each scenario's live tests (its RUNNING shadows, its RUNNING split), answered at
 * once: fresh for `freshMs`, then used stale while read again in the background, never waited on. A scenario not
 * in the cache yet is read in the background and answered as unknown (its run is neither shadowed nor split).
 */
export class LiveTestCache<Entry extends {}> {
  private readonly cache: StaleWhileRevalidateCache<number, Entry>;

  constructor(
    load: (scenarioId: number) => Promise<Entry>,
    options: LiveTestCacheOptions,
    private readonly logger: Logger,
    /** What an entry is, in log lines (`the shadows of a scenario`). */
    private readonly what: string,
  ) {
    this.cache = new StaleWhileRevalidateCache(load, {
      freshMs: options.freshMs,
      maxStaleMs: options.maxStaleMs,
      max: 10_000,
      onRefreshError: (error) =>
        this.logger.warn({ err: error }, `${this.what} could not be read again; using what is in hand`),
    });
  }

  /** The scenario's entry, or undefined while it is read (in the background: never waited on). */
  peek(scenarioId: number): Entry | undefined {
    const entry = this.cache.peek(scenarioId);
    if (entry === undefined)
      this.cache
        .get(scenarioId)
        .catch((error: unknown) => this.logger.warn({ err: error }, `${this.what} could not be read`));
    return entry;
  }

  /** A change made in this process (attach, stop, start, end, promote, a deploy) applies at once here: read again now. */
  async reload(scenarioId: number): Promise<void> {
    this.cache.delete(scenarioId);
    await this.cache.get(scenarioId);
  }
}
