import { describe, expect, it } from '@jest/globals';
import { StaleWhileRevalidateCache } from '../../src/db/stale-while-revalidate.js';

/** A loader whose answers and failures the test decides, counting its calls. */
function loader() {
  const calls: string[] = [];
  let answer = 'v1';
  let failing = false;
  let gate: Promise<void> | undefined;
  return {
    calls,
    set(value: string) {
      answer = value;
    },
    fail(on: boolean) {
      failing = on;
    },
    hold(promise: Promise<void> | undefined) {
      gate = promise;
    },
    load: async (key: string) => {
      calls.push(key);
      // What the source holds when the read begins (a read that started before a change answers the old value).
      const value = answer;
      if (gate) await gate;
      if (failing) throw new Error('MySQL is down');
      return value === 'missing' ? undefined : `${key}:${value}`;
    },
  };
}
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('StaleWhileRevalidateCache', () => {
  it('serves a fresh answer without loading, a stale one at once while it is read again, then the new one', async () => {
    let now = 0;
    const source = loader();
    const cache = new StaleWhileRevalidateCache(source.load, {
      freshMs: 1000,
      maxStaleMs: 60_000,
      max: 10,
      now: () => now,
    });
    expect(await cache.get('a')).toBe('a:v1');
    now = 900;
    expect(await cache.get('a')).toBe('a:v1');
    expect(source.calls).toHaveLength(1);
    source.set('v2');
    now = 1500;
    // Stale: answered from what is in hand, without waiting; one background read for many callers.
    expect(await Promise.all([cache.get('a'), cache.get('a'), cache.get('a')])).toEqual(['a:v1', 'a:v1', 'a:v1']);
    await settle();
    expect(source.calls).toHaveLength(2);
    expect(await cache.get('a')).toBe('a:v2');
  });

  it('rides out a failing source within the bound, asking it again at most once per freshMs, and fails past the bound', async () => {
    let now = 0;
    const source = loader();
    const errors: unknown[] = [];
    const cache = new StaleWhileRevalidateCache(source.load, {
      freshMs: 1000,
      maxStaleMs: 10_000,
      max: 10,
      now: () => now,
      onRefreshError: (error) => errors.push(error),
    });
    await cache.get('a');
    source.fail(true);
    now = 2000;
    expect(await cache.get('a')).toBe('a:v1');
    await settle();
    expect(errors).toHaveLength(1);
    now = 2500;
    for (let request = 0; request < 20; request += 1) expect(await cache.get('a')).toBe('a:v1');
    await settle();
    expect(source.calls).toHaveLength(2);
    now = 3100;
    await cache.get('a');
    await settle();
    expect(source.calls).toHaveLength(3);
    // Past freshMs + maxStaleMs the answer in hand is not used: the caller waits for the source, and fails with it.
    now = 11_000;
    await expect(cache.get('a')).rejects.toThrow('MySQL is down');
    source.fail(false);
    expect(await cache.get('a')).toBe('a:v1');
  });

  it('loads a key once for concurrent callers, and keeps no answer a load began before a delete', async () => {
    const source = loader();
    const cache = new StaleWhileRevalidateCache(source.load, { freshMs: 1000, maxStaleMs: 1000, max: 10 });
    let release!: () => void;
    source.hold(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const first = Promise.all([cache.get('a'), cache.get('a')]);
    cache.delete('a');
    source.set('after-delete');
    source.hold(undefined);
    const afterDelete = cache.get('a');
    release();
    // The read that began before the delete answers its callers, but its older answer is not kept.
    expect(await first).toEqual(['a:v1', 'a:v1']);
    expect(await afterDelete).toBe('a:after-delete');
    expect(await cache.get('a')).toBe('a:after-delete');
  });

  it('does not cache an answer that is undefined (a credential that does not exist yet)', async () => {
    const source = loader();
    const cache = new StaleWhileRevalidateCache(source.load, { freshMs: 1000, maxStaleMs: 1000, max: 10 });
    source.set('missing');
    expect(await cache.get('a')).toBeUndefined();
    source.set('v1');
    expect(await cache.get('a')).toBe('a:v1');
  });
});
