/**
 * How deep a JSON value nests, checked without recursion. A value nested 100,000 levels deep
 * parses (V8's JSON.parse does not recurse) but then breaks everything that walks it recursively —
 * JSON.stringify, code generation, validators — with a RangeError. The walk uses an explicit stack,
 * so it cannot overflow itself, and it touches only containers, so a flat value of scalars (the hot
 * path: scoring inputs) costs one loop over its values. Used for request bodies
 * (src/http/nesting-depth.ts) and for the JSON inside scenario documents (parse-document.ts).
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
  return path.length > MAX_PATH_CHARS
    ? `${path.slice(0, MAX_PATH_CHARS / 2)}…${path.slice(-MAX_PATH_CHARS / 2)}`
    : path;
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
