import { BadRequestError } from '../errors/bad-request-error.js';

/**
 * The nesting-depth limit of request bodies (LIMIT_BODY_DEPTH). A body nested 100,000 levels deep
 * parses (V8's JSON.parse does not recurse) but then breaks everything that walks it recursively —
 * JSON.stringify, the YAML composer, validators — with a RangeError. Both checks here use an
 * explicit stack, so they cannot overflow themselves, and they touch only containers, so a flat
 * body of scalars (the hot path: scoring inputs) costs one loop over its values.
 */

/** One container on the walk: where it sits, so the path can be named when the limit is crossed. */
interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string | number;
}

const MAX_KEY_CHARS = 32;
const MAX_PATH_CHARS = 1000;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function formatKey(key: string | number): string {
  if (typeof key === 'number') return `[${key}]`;
  if (IDENTIFIER.test(key) && key.length <= MAX_KEY_CHARS) return `.${key}`;
  return `[${JSON.stringify(key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key)}]`;
}

function pathOf(frame: Frame, root: string): string {
  const keys: Array<string | number> = [];
  for (let at: Frame | undefined = frame; at?.parent; at = at.parent) keys.push(at.key);
  let path = root;
  for (let index = keys.length - 1; index >= 0; index -= 1) path += formatKey(keys[index]);
  return path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS / 2)}…${path.slice(-MAX_PATH_CHARS / 2)}` : path;
}

/**
 * The path (`body.a[0].b`) of the first container nested deeper than `maxDepth` levels in
 * `value` (the value itself is level 1; scalars do not count), or undefined when none is.
 * Cycles (YAML aliases can make them) count as ever deeper nesting, so they are reported too.
 */
export function pathBeyondDepth(value: unknown, maxDepth: number, root = 'body'): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.depth > maxDepth) return pathOf(frame, root);
    const container = frame.value as Record<string, unknown>;
    const depth = frame.depth + 1;
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length; index += 1) {
        const child: unknown = container[index];
        if (child !== null && typeof child === 'object') stack.push({ value: child, depth, parent: frame, key: index });
      }
    } else {
      for (const key in container) {
        const child = container[key];
        if (child !== null && typeof child === 'object') stack.push({ value: child, depth, parent: frame, key });
      }
    }
  }
  return undefined;
}

export function nestingTooDeep(path: string, maxDepth: number, what = 'The request body'): BadRequestError {
  return new BadRequestError(`${what} is nested deeper than ${maxDepth} levels at ${path}.`, 'NESTING_TOO_DEEP', [{ path, message: `nested deeper than ${maxDepth} levels` }]);
}

/** Throws 400 NESTING_TOO_DEEP naming where `value` nests deeper than `maxDepth` levels. */
export function assertNestingWithin(value: unknown, maxDepth: number, root = 'body', what?: string): void {
  const path = pathBeyondDepth(value, maxDepth, root);
  if (path !== undefined) throw nestingTooDeep(path, maxDepth, what);
}
