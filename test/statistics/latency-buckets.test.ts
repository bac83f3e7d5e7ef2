import { describe, expect, it } from '@jest/globals';
import { bucketMiddle, latencyBucket, MAX_BUCKET, percentileOf } from '../../src/statistics/latency-buckets.js';

describe('latency buckets', () => {
  it('put every latency in a bucket whose middle is within 9 % of it', () => {
    for (let micros = 1; micros < 5e9; micros *= 1.037) {
      const middle = bucketMiddle(latencyBucket(micros));
      if (latencyBucket(micros) === MAX_BUCKET) break;
      expect(Math.abs(middle - micros) / micros).toBeLessThan(0.091);
    }
  });

  it('put latencies under a microsecond in the first bucket and hours in the last', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(0.4)).toBe(0);
    expect(latencyBucket(4 * 3600e6)).toBe(MAX_BUCKET);
  });

  it('read a percentile as the middle of the bucket that holds its rank', () => {
    const buckets = new Map<number, number>([
      [latencyBucket(1000), 18],
      [latencyBucket(5000), 1],
      [latencyBucket(50_000), 1],
    ]);
    expect(percentileOf(buckets, 0.95)).toBe(bucketMiddle(latencyBucket(5000)));
    expect(percentileOf(buckets, 0.5)).toBe(bucketMiddle(latencyBucket(1000)));
    expect(percentileOf(buckets, 1)).toBe(bucketMiddle(latencyBucket(50_000)));
    expect(percentileOf(new Map(), 0.95)).toBeUndefined();
  });
});
