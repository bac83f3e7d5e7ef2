import { BadRequestError } from '../errors/bad-request-error.js';
import { pathBeyondDepth } from '../engine/index.js';

/**
 * The nesting-depth limit of request bodies (LIMIT_BODY_DEPTH): 400 NESTING_TOO_DEEP naming where
 * the limit is crossed. The walk itself (explicit stack, cycles included) is the engine's, which
 * bounds the JSON inside scenario documents the same way.
 */

export function nestingTooDeep(path: string, maxDepth: number, what = 'The request body'): BadRequestError {
  return new BadRequestError(`${what} is nested deeper than ${maxDepth} levels at ${path}.`, 'NESTING_TOO_DEEP', [
    { path, message: `nested deeper than ${maxDepth} levels` },
  ]);
}

/** Throws 400 NESTING_TOO_DEEP naming where `value` nests deeper than `maxDepth` levels. */
export function assertNestingWithin(value: unknown, maxDepth: number, root = 'body', what?: string): void {
  const path = pathBeyondDepth(value, maxDepth, root);
  if (path !== undefined) throw nestingTooDeep(path, maxDepth, what);
}
