import { LRUCache } from 'lru-cache';

export interface StaleWhileRevalidateOptions {
  /** How long an answer is used as it is. */
  freshMs: number;
  /**
   * How long past `freshMs` an answer is still used while a refresh runs in the background: the longest the
   * hot path serves an old answer when MySQL is slow or down. Past it, a request waits for a load (and fails
   * with it), so no answer lives for ever.
   */
  maxStaleMs: number;
  /** Most keys kept (least recently used go first). */
  max: number;
  /** A background refresh failed (the stale answer stays until its bound). */
  onRefreshError?: (error: unknown) => void;
  /** Test clock. */
  now?: () => number;
}

interface Entry<V> {
  value: V;
  loadedAt: number;
  refreshing: boolean;
  /** After a failed refresh, the next one waits `freshMs`: a MySQL that is down is not asked once per request. */
  refreshAfter: number;
}

/**
 * A read-through cache whose expired answers are served while a refresh runs in the background, within a
 * bound: the hot path waits for MySQL only on a key it has never seen (or not seen for `freshMs + maxStaleMs`),
 * instead of once per `freshMs` per key, and rides out a MySQL outage of up to `maxStaleMs` on what it knew.
 * Loads of one key are shared by concurrent callers (single flight). `delete` (a change made in this process)
 * takes effect at once: a load that began before it does not put its older answer back.
 * A load answering `undefined` is not cached (a credential that does not exist yet must work as soon as it does).
 */
export class StaleWhileRevalidateCache<K extends {}, V extends {}> {
  private readonly entries: LRUCache<K, Entry<V>>;
  private readonly inFlight = new Map<K, Promise<V | undefined>>();
  private readonly now: () => number;

  constructor(
    private readonly load: (key: K) => Promise<V | undefined>,
    private readonly options: StaleWhileRevalidateOptions,
  ) {
    this.entries = new LRUCache({ max: options.max });
    this.now = options.now ?? Date.now;
  }

  /** The answer for `key`: cached when fresh, cached and refreshed in the background when stale within the bound, else loaded. */
  async get(key: K): Promise<V | undefined> {
    const cached = this.peek(key);
    if (cached !== undefined) return cached;
    return this.loadShared(key);
  }

  /** The cached answer when fresh or stale within the bound (a stale one starts a refresh); undefined otherwise. */
  peek(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const age = this.now() - entry.loadedAt;
    if (age < this.options.freshMs) return entry.value;
    if (age >= this.options.freshMs + this.options.maxStaleMs) return undefined;
    if (!entry.refreshing && this.now() >= entry.refreshAfter) {
      entry.refreshing = true;
      this.loadShared(key)
        .catch((error: unknown) => {
          entry.refreshAfter = this.now() + this.options.freshMs;
          this.options.onRefreshError?.(error);
        })
        .finally(() => {
          entry.refreshing = false;
        });
    }
    return entry.value;
  }

  delete(key: K): void {
    this.entries.delete(key);
    this.inFlight.delete(key);
  }

  /** Deletes every key whose answer matches (e.g. every cached token of a user who was disabled here). */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries.entries()) if (matches(entry.value)) this.delete(key);
  }

  private loadShared(key: K): Promise<V | undefined> {
    const running = this.inFlight.get(key);
    if (running) return running;
    const loading: Promise<V | undefined> = this.load(key)
      .then((value) => {
        // A delete since this load began: its answer may predate the change, so it is not kept.
        if (this.inFlight.get(key) === loading) {
          if (value === undefined) this.entries.delete(key);
          else this.entries.set(key, { value, loadedAt: this.now(), refreshing: false, refreshAfter: 0 });
        }
        return value;
      })
      .finally(() => {
        if (this.inFlight.get(key) === loading) this.inFlight.delete(key);
      });
    this.inFlight.set(key, loading);
    return loading;
  }
}
