import type { Predicate } from './model-document.js';

/**
 * PMML predicates as inline JavaScript expressions, for model-codegen.ts and tree-codegen.ts. PMML's predicates are
 * three-valued (a comparison with a missing value is unknown, null here); most callers only ask "is it true?", which
 * for simple predicates is one comparison and a null check, so each predicate has two forms. Compound predicates
 * fold two values at a time through the small A3/O3/X3/S3 helpers of PREDICATE_RUNTIME (no array per evaluation).
 */

const q = JSON.stringify;

/** Where a predicate reads a field: a JavaScript expression (a local variable, or `X[slot]`). */
export type FieldRead = (field: string) => string;

/** What of model-codegen's emitter a predicate uses: constants (long value sets) only. */
interface ConstantSink {
  constant(source: string): string;
}

/** Kleene's and, or, xor and PMML's surrogate on two three-valued values; emitted once per model program. */
export const PREDICATE_RUNTIME = `function A3(a, b) { return a === false || b === false ? false : a === null || b === null ? null : true; }
function O3(a, b) { return a === true || b === true ? true : a === null || b === null ? null : false; }
function X3(a, b) { return a === null || b === null ? null : a !== b; }
function S3(a, b) { return a !== null ? a : b; }`;

const COMPARE = {
  equal: '===',
  notEqual: '!==',
  lessThan: '<',
  lessOrEqual: '<=',
  greaterThan: '>',
  greaterOrEqual: '>=',
} as const;

/** Sets up to this size are tested by comparisons in line; larger ones by `includes` on a hoisted array. */
const INLINE_SET = 8;

/** `x` is one of `values` (x not missing). */
function membership(e: ConstantSink, x: string, values: Predicate & { op: 'set' }): string {
  if (values.values.length <= INLINE_SET)
    return values.values.length === 0 ? 'false' : `(${values.values.map((v) => `${x} === ${q(v)}`).join(' || ')})`;
  return `${e.constant(`JSON.parse(${q(JSON.stringify(values.values))})`)}.includes(${x})`;
}

/** The predicate's three-valued value: true, false or null (unknown). */
export function predicateSource(e: ConstantSink, p: Predicate, read: FieldRead): string {
  switch (p.op) {
    case 'true':
      return 'true';
    case 'false':
      return 'false';
    case 'simple': {
      const x = read(p.field);
      if (p.operator === 'isMissing') return `(${x} === null)`;
      if (p.operator === 'isNotMissing') return `(${x} !== null)`;
      return `(${x} === null ? null : ${x} ${COMPARE[p.operator]} ${q(p.value)})`;
    }
    case 'set': {
      const x = read(p.field);
      return `(${x} === null ? null : ${p.isIn ? '' : '!'}${membership(e, x, p)})`;
    }
    case 'compound': {
      const values = p.predicates.map((c) => predicateSource(e, c, read));
      // an empty compound: and of nothing is true, or and xor false, a surrogate finds no value
      if (values.length === 0) return { and: 'true', or: 'false', xor: 'false', surrogate: 'null' }[p.booleanOperator];
      const fn = { and: 'A3', or: 'O3', xor: 'X3', surrogate: 'S3' }[p.booleanOperator];
      return values.reduceRight((rest, value) => `${fn}(${value}, ${rest})`);
    }
  }
}

/** A boolean expression: the predicate is true (false when it is false or unknown). */
export function truthSource(e: ConstantSink, p: Predicate, read: FieldRead): string {
  switch (p.op) {
    case 'simple': {
      if (p.operator === 'isMissing' || p.operator === 'isNotMissing') return predicateSource(e, p, read);
      const x = read(p.field);
      return `(${x} !== null && ${x} ${COMPARE[p.operator]} ${q(p.value)})`;
    }
    case 'set': {
      const x = read(p.field);
      return `(${x} !== null && ${p.isIn ? '' : '!'}${membership(e, x, p)})`;
    }
    case 'compound':
      // Kleene: an and is true when every part is, an or when one is
      if (p.booleanOperator === 'and' && p.predicates.length > 0)
        return `(${p.predicates.map((c) => truthSource(e, c, read)).join(' && ')})`;
      if (p.booleanOperator === 'or' && p.predicates.length > 0)
        return `(${p.predicates.map((c) => truthSource(e, c, read)).join(' || ')})`;
      return `(${predicateSource(e, p, read)} === true)`;
    default:
      return predicateSource(e, p, read);
  }
}

/**
 * A boolean expression: the predicate is unknown; 'false' when it never is. Undefined for compound predicates,
 * which the caller evaluates once in their three-valued form instead.
 */
export function unknownSource(p: Predicate, read: FieldRead): string | undefined {
  switch (p.op) {
    case 'true':
    case 'false':
      return 'false';
    case 'simple':
      return p.operator === 'isMissing' || p.operator === 'isNotMissing' ? 'false' : `(${read(p.field)} === null)`;
    case 'set':
      return `(${read(p.field)} === null)`;
    case 'compound':
      return undefined;
  }
}
