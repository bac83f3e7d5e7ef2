import { describe, expect, it } from '@jest/globals';
import { armAt, splitPoint } from '../../src/shadows/split.js';
import { wilson } from '../../src/shadows/split-reports.js';

/** z of a two-sided 99 % interval. */
const Z99 = 2.5758293035489004;
const N = 100_000;

/** A seeded PRNG (mulberry32): the random arm's runs are the same on every run of the test. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CHALLENGERS = [
  { version: 'develop', percent: 10 },
  { version: '2', percent: 25 },
];

/** Counts per arm (`champion` for none) over `points`. */
function counts(points: Iterable<number>): Record<string, number> {
  const byArm: Record<string, number> = { champion: 0, develop: 0, '2': 0 };
  for (const point of points) byArm[armAt(CHALLENGERS, point)?.version ?? 'champion']++;
  return byArm;
}

function expectWithin99(byArm: Record<string, number>): void {
  for (const [arm, percent] of [
    ['champion', 65],
    ['develop', 10],
    ['2', 25],
  ] as const) {
    const p = percent / 100;
    const bound = Z99 * Math.sqrt(N * p * (1 - p));
    expect(Math.abs(byArm[arm] - N * p)).toBeLessThanOrEqual(bound);
  }
}

describe('the assignment of a run to an arm', () => {
  it('agrees with the percentages within the binomial 99 % interval over 100,000 sticky keys', () => {
    const points = Array.from({ length: N }, (_, i) =>
      splitPoint('0193a8f2-7a10-7c3e-8d4f-1b2c3d4e5f62', `customer-${i}`, () => {
        throw new Error('a sticky split draws no random number');
      }),
    );
    expectWithin99(counts(points));
  });

  it('agrees with the percentages within the binomial 99 % interval over 100,000 random runs (fixed seed)', () => {
    const random = mulberry32(32);
    expectWithin99(counts(Array.from({ length: N }, () => splitPoint('any', undefined, random))));
  });

  it('gives a key the same arm every time, a number and its text alike, and another split another draw', () => {
    for (const key of ['c-1', 'c-2', 'c-3', 42]) {
      const first = splitPoint('split-a', key, Math.random);
      for (let i = 0; i < 10; i++) expect(splitPoint('split-a', key, Math.random)).toBe(first);
    }
    expect(splitPoint('split-a', 42, Math.random)).toBe(splitPoint('split-a', '42', Math.random));
    expect(splitPoint('split-a', 'c-1', Math.random)).not.toBe(splitPoint('split-b', 'c-1', Math.random));
  });

  it('puts points in [0, 100), challengers first, the champion taking the rest', () => {
    expect(armAt(CHALLENGERS, 0)?.version).toBe('develop');
    expect(armAt(CHALLENGERS, 9.999)?.version).toBe('develop');
    expect(armAt(CHALLENGERS, 10)?.version).toBe('2');
    expect(armAt(CHALLENGERS, 34.999)?.version).toBe('2');
    expect(armAt(CHALLENGERS, 35)).toBeUndefined();
  });
});

describe('the Wilson score interval', () => {
  it('matches published values and stays within [0, 1]', () => {
    // 81 of 263 (Wilson 1927, as in Newcombe 1998): 0.2553 to 0.3662.
    const { low, high } = wilson(81, 263);
    expect(low).toBeCloseTo(0.2553, 4);
    expect(high).toBeCloseTo(0.3662, 4);
    expect(wilson(0, 10).low).toBe(0);
    expect(wilson(10, 10).high).toBe(1);
    expect(wilson(0, 0)).toEqual({ low: 0, high: 1 });
  });
});
