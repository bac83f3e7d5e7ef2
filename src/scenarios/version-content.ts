import { createHash } from 'node:crypto';

/**
 * What identifies a version's content: SHA-256 of its graph text and its node-properties text.
 * Compile-cache keys of editable content are built on it, and a replay keeps it so that deploy can
 * tell whether the replay tested exactly the content being deployed.
 */
export function contentHash(content: string, nodeProperties: string): string {
  return createHash('sha256').update(content).update('\u0000').update(nodeProperties).digest('hex');
}

/** The engine compile-cache key of content (equal content compiles once, whatever version holds it). */
export function contentCacheKey(content: string, nodeProperties: string): string {
  return hashCacheKey(contentHash(content, nodeProperties));
}

/** The same key, from the content's hash. */
export function hashCacheKey(hash: string): string {
  return `doc:${hash}`;
}
