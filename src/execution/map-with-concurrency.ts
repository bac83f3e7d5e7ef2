/** Runs give the event loop a turn at least this often. */
const YIELD_EVERY_MS = 20;

/**
 * Maps with at most `concurrency` calls in flight, keeping the input order. When `stop()` turns
 * true no further item is started, and the answer holds the results of the items started (a prefix).
 */
export async function mapWithConcurrency<T, R>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<R>,
  stop: () => boolean = () => false,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let lastYield = performance.now();
  const lane = async (): Promise<void> => {
    while (next < items.length && !stop()) {
      const index = next;
      next += 1;
      results[index] = await fn(items[index]);
      // Engine runs settle through microtasks only: without this, a whole slice would hold the event
      // loop, and timers (lock renewal), signals (SIGTERM) and I/O would wait for its end.
      if (performance.now() - lastYield >= YIELD_EVERY_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        lastYield = performance.now();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return next < items.length ? results.slice(0, next) : results;
}
