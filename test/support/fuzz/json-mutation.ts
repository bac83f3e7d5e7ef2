import fc from 'fast-check';
import { hostileStrings, wrongTypeValues } from './hostile-values.js';

/**
 * Near-valid documents: a valid value (an example scenario, a score input) with one to three
 * nodes changed. These get past the schema and into compilers, stores and engines, where a
 * random document never would.
 */

type Path = Array<string | number>;

const MUTATIONS = [
  'replace',
  'remove',
  'hostile-string',
  'number-edge',
  'nest',
  'duplicate',
  'add-key',
  'empty',
] as const;
type Mutation = (typeof MUTATIONS)[number];

interface MutationStep {
  at: number;
  how: Mutation;
  value: unknown;
  text: string;
  number: number;
  depth: number;
}

const numberEdges = fc.constantFrom(
  0,
  -1,
  -0,
  0.1,
  1e308,
  -1e308,
  5e-324,
  2 ** 31,
  2 ** 53 + 1,
  -(2 ** 63),
  Number.MAX_SAFE_INTEGER,
);

/** Every node of `value`, up to `limit` of them (root first). */
function pathsOf(value: unknown, limit = 4000): Path[] {
  const paths: Path[] = [];
  const walk = (node: unknown, path: Path) => {
    if (paths.length >= limit) return;
    paths.push(path);
    if (Array.isArray(node))
      node.forEach((item, index) => {
        walk(item, [...path, index]);
      });
    else if (node && typeof node === 'object')
      for (const [key, item] of Object.entries(node)) walk(item, [...path, key]);
  };
  walk(value, []);
  return paths;
}

function nest(value: unknown, depth: number): unknown {
  let nested = value;
  for (let level = 0; level < depth; level += 1) nested = level % 2 === 0 ? [nested] : { a: nested };
  return nested;
}

function apply(root: unknown, path: Path, step: MutationStep): unknown {
  const replacement = (current: unknown): unknown => {
    switch (step.how) {
      case 'replace':
        return step.value;
      case 'hostile-string':
        return step.text;
      case 'number-edge':
        return step.number;
      case 'nest':
        return nest(current, step.depth);
      case 'empty':
        return Array.isArray(current) ? [] : current && typeof current === 'object' ? {} : '';
      default:
        return current;
    }
  };
  if (path.length === 0) {
    if (step.how === 'remove') return undefined;
    if (step.how === 'add-key' && root && typeof root === 'object' && !Array.isArray(root))
      return { ...root, [step.text]: step.value };
    return replacement(root);
  }
  const parent = path
    .slice(0, -1)
    .reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], root) as
    | Record<string | number, unknown>
    | unknown[]
    | undefined;
  const key = path[path.length - 1];
  if (!parent || typeof parent !== 'object') return root;
  if (step.how === 'remove') {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key as string];
  } else if (step.how === 'duplicate' && Array.isArray(parent)) {
    parent.splice(Number(key), 0, structuredClone(parent[Number(key)]));
  } else if (step.how === 'add-key') {
    const target = (parent as Record<string | number, unknown>)[key];
    if (target && typeof target === 'object' && !Array.isArray(target))
      (target as Record<string, unknown>)[step.text] = step.value;
    else (parent as Record<string | number, unknown>)[key] = replacement(target);
  } else {
    (parent as Record<string | number, unknown>)[key] = replacement((parent as Record<string | number, unknown>)[key]);
  }
  return root;
}

const step: fc.Arbitrary<MutationStep> = fc.record({
  at: fc.nat(),
  how: fc.constantFrom(...MUTATIONS),
  value: wrongTypeValues,
  text: hostileStrings,
  number: numberEdges,
  depth: fc.constantFrom(2, 64, 300, 1000),
});

/** `seed` with one to three nodes replaced, removed, duplicated, nested or given hostile values. */
export function mutatedJson(seed: unknown): fc.Arbitrary<unknown> {
  const paths = pathsOf(seed);
  return fc.array(step, { minLength: 1, maxLength: 3 }).map((steps) => {
    let value = structuredClone(seed);
    for (const each of steps) value = apply(value, paths[each.at % paths.length], each);
    return value;
  });
}

const PLACEHOLDER = '\u0000fuzz-placeholder\u0000';

/**
 * The JSON text of `seed` cut around one of its nodes (`before` + node + `after`), so a deep or
 * huge value can be put in a place the schema accepts (a score input, a test case value).
 */
export function jsonTextAroundANode(seed: unknown): fc.Arbitrary<{ before: string; after: string }> {
  const paths = pathsOf(seed).filter((path) => path.length > 0);
  if (paths.length === 0) return fc.constant({ before: '', after: '' });
  return fc.nat({ max: paths.length - 1 }).map((index) => {
    const value = structuredClone(seed);
    const path = paths[index];
    const parent = path
      .slice(0, -1)
      .reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value) as Record<
      string | number,
      unknown
    >;
    parent[path[path.length - 1]] = PLACEHOLDER;
    const [before, after] = JSON.stringify(value).split(JSON.stringify(PLACEHOLDER));
    return { before, after };
  });
}
