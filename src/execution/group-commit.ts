/**
 * Group commit: callers submit one item each and wait for its outcome; items are committed in
 * groups, one round trip per group instead of one per item. An idle group commit starts at once
 * (no added latency); while `concurrency` commits are in flight, new items wait and go into the
 * next group together, so groups grow with the load. `minIntervalMs` spaces commits out under load
 * (the next one starts no sooner than that after the previous began), trading a few milliseconds
 * of latency for fewer, fuller groups.
 */
export interface GroupCommitOptions<T, R> {
  /** Commits one group; answers one outcome per item, in order: a value, or an Error to reject that item with. Throwing rejects the whole group. */
  commit(items: T[]): Promise<Array<R | Error>>;
  /** Most items per group. */
  maxItems: number;
  /** Commits in flight at once (default 1). */
  concurrency?: number;
  minIntervalMs?: number;
}

interface Waiting<T, R> {
  item: T;
  resolve(value: R): void;
  reject(error: Error): void;
}

function ignore(): void {}

export class GroupCommit<T, R> {
  private waiting: Array<Waiting<T, R>> = [];
  private inFlight = 0;
  // Never started: the first commit need not wait, however young the process (performance.now() counts from its start).
  private lastStart = -Infinity;
  private timer?: NodeJS.Timeout;
  /** Items (counted from the front) that may be committed without waiting for minIntervalMs. */
  private hurried = 0;

  constructor(private readonly options: GroupCommitOptions<T, R>) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  /**
   * Queues an item whose outcome nobody waits for (the commit learns of failures itself): no
   * promise per item, for callers that queue on a hot path.
   */
  enqueue(item: T): void {
    this.waiting.push({ item, resolve: ignore, reject: ignore });
    this.pump();
  }

  /**
   * Commits the items waiting now as soon as `concurrency` allows, without waiting for
   * `minIntervalMs` (a process that stops, or a caller that needs them stored now); items submitted
   * later are spaced out again.
   */
  hurry(): void {
    this.hurried = this.waiting.length;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pump();
  }

  private pump(): void {
    const { concurrency = 1, minIntervalMs = 0, maxItems } = this.options;
    while (this.waiting.length > 0 && this.inFlight < concurrency && this.timer === undefined) {
      const wait = this.hurried > 0 ? 0 : this.lastStart + minIntervalMs - performance.now();
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, wait);
        return;
      }
      this.lastStart = performance.now();
      const group = this.waiting.splice(0, maxItems);
      this.hurried = Math.max(0, this.hurried - group.length);
      void this.run(group);
    }
  }

  private async run(group: Array<Waiting<T, R>>): Promise<void> {
    this.inFlight += 1;
    try {
      const outcomes = await this.options.commit(group.map((entry) => entry.item));
      group.forEach((entry, index) => {
        const outcome = outcomes[index];
        if (outcome instanceof Error) entry.reject(outcome);
        else entry.resolve(outcome as R);
      });
    } catch (error) {
      for (const entry of group) entry.reject(error as Error);
    } finally {
      this.inFlight -= 1;
      this.pump();
    }
  }
}
