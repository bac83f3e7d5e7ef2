import { describe, expect, it } from '@jest/globals';
import { ScrapeProbe } from '../../src/metrics/scrape-probe.js';

describe('ScrapeProbe', () => {
  it('answers the value read', async () => {
    expect(
      await new ScrapeProbe(
        async () => 7,
        100,
        () => undefined,
      ).value(),
    ).toBe(7);
  });

  it('answers NaN and reports the error when the read fails', async () => {
    const failures: unknown[] = [];
    const probe = new ScrapeProbe(
      async () => {
        throw new Error('connect ECONNREFUSED');
      },
      100,
      (error) => failures.push(error),
    );
    expect(await probe.value()).toBeNaN();
    expect(failures).toHaveLength(1);
  });

  it('answers NaN after its time-out while the read hangs, and waits for that same read at the next scrape instead of starting another', async () => {
    let reads = 0;
    let finish: (value: number) => void = () => undefined;
    const probe = new ScrapeProbe(
      () => {
        reads += 1;
        return new Promise<number>((resolve) => {
          finish = resolve;
        });
      },
      50,
      () => undefined,
    );
    const started = performance.now();
    expect(await probe.value()).toBeNaN();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await probe.value()).toBeNaN();
    expect(reads).toBe(1);
    finish(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await probe.value()).toBeNaN();
    expect(reads).toBe(2);
  });
});
