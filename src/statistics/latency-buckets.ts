/**
 * Latency histogram buckets of the run statistics: quarter octaves of microseconds. Bucket b holds
 * latencies in [2^(b/4), 2^((b+1)/4)) µs (bucket 0 also holds everything under 1 µs), so a bucket
 * is 19 % wide and its geometric middle is within 9 % of any latency in it. A p95 read from these
 * buckets is therefore within 9 % of the exact p95 (then kept within the window's min and max).
 */
const BUCKETS_PER_OCTAVE = 4;
/** 2^(127/4) µs is about 58 minutes: far past any run's time limit. */
export const MAX_BUCKET = 127;

export function latencyBucket(micros: number): number {
  if (micros < 1) return 0;
  return Math.min(Math.floor(Math.log2(micros) * BUCKETS_PER_OCTAVE), MAX_BUCKET);
}

/** The geometric middle of a bucket, in microseconds. */
export function bucketMiddle(bucket: number): number {
  return 2 ** ((bucket + 0.5) / BUCKETS_PER_OCTAVE);
}

/**
 * The latency (µs) below which `fraction` of the runs counted in `buckets` (bucket → runs) fall,
 * as the middle of the bucket that holds that rank; undefined when nothing was counted.
 */
export function percentileOf(buckets: Map<number, number>, fraction: number): number | undefined {
  let total = 0;
  for (const runs of buckets.values()) total += runs;
  if (total === 0) return undefined;
  const rank = Math.ceil(fraction * total);
  let seen = 0;
  for (const bucket of [...buckets.keys()].sort((a, b) => a - b)) {
    seen += buckets.get(bucket) as number;
    if (seen >= rank) return bucketMiddle(bucket);
  }
  return undefined;
}
