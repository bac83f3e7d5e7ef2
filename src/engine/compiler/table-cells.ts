import type { CellCondition, TableColumnType } from '../types.js';

/** A parsed decision-table cell. Built on the host from text or objects; turned into JS with literals escaped by JSON.stringify. */
type Literal = string | number | boolean | null;
export type CellTest =
  | { kind: 'any' }
  | { kind: 'cmp'; op: '>' | '>=' | '<' | '<='; value: number }
  | { kind: 'eq'; value: Literal; negate: boolean }
  | { kind: 'in'; values: Literal[]; negate: boolean }
  | { kind: 'range'; min: number; max: number; minInclusive: boolean; maxInclusive: boolean }
  | { kind: 'all'; tests: CellTest[] };

export class CellSyntaxError extends Error {}

const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const BARE_WORD = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export function parseCell(cell: CellCondition, type: TableColumnType): CellTest {
  const test =
    typeof cell === 'string'
      ? parseCellText(cell)
      : typeof cell === 'object' && cell !== null
        ? parseCellObject(cell)
        : { kind: 'eq' as const, value: cell, negate: false };
  checkType(test, type);
  return test;
}

function parseCellText(raw: string): CellTest {
  const text = raw.trim();
  if (text === '' || text === '-' || text.toLowerCase() === 'any') return { kind: 'any' };
  const range = /^([[(\]])\s*(\S+?)\s*\.\.\s*(\S+?)\s*([\])[])$/.exec(text);
  if (range) {
    const min = parseNumber(range[2]);
    const max = parseNumber(range[3]);
    if (min > max) throw new CellSyntaxError(`range ${text} has its lower bound above its upper bound`);
    return { kind: 'range', min, max, minInclusive: range[1] === '[', maxInclusive: range[4] === ']' };
  }
  const setMatch = /^(not\s+)?in\s*\[(.*)\]$/is.exec(text);
  if (setMatch) return { kind: 'in', values: parseList(setMatch[2]), negate: !!setMatch[1] };
  const cmp = /^(>=|<=|!=|<>|==|=|>|<)\s*(.*)$/s.exec(text);
  if (cmp) {
    const op = cmp[1];
    if (op === '=' || op === '==') return { kind: 'eq', value: parseLiteral(cmp[2]), negate: false };
    if (op === '!=' || op === '<>') return { kind: 'eq', value: parseLiteral(cmp[2]), negate: true };
    return { kind: 'cmp', op: op as '>' | '>=' | '<' | '<=', value: parseNumber(cmp[2]) };
  }
  const values = parseList(text);
  return values.length === 1 ? { kind: 'eq', value: values[0], negate: false } : { kind: 'in', values, negate: false };
}

function parseCellObject(cell: Record<string, unknown>): CellTest {
  const tests: CellTest[] = [];
  for (const [key, value] of Object.entries(cell)) {
    switch (key) {
      case 'eq':
      case 'ne':
        tests.push({ kind: 'eq', value: asLiteral(value), negate: key === 'ne' });
        break;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        if (typeof value !== 'number') throw new CellSyntaxError(`${key} needs a number, got ${JSON.stringify(value)}`);
        const op = ({ gt: '>', gte: '>=', lt: '<', lte: '<=' } as const)[key];
        tests.push({ kind: 'cmp', op, value });
        break;
      }
      case 'in':
      case 'notIn':
        if (!Array.isArray(value)) throw new CellSyntaxError(`${key} needs a list`);
        tests.push({ kind: 'in', values: value.map(asLiteral), negate: key === 'notIn' });
        break;
      default:
        throw new CellSyntaxError(`unknown operator "${key}" (use eq, ne, gt, gte, lt, lte, in, notIn)`);
    }
  }
  if (tests.length === 0) throw new CellSyntaxError('empty condition object');
  return tests.length === 1 ? tests[0] : { kind: 'all', tests };
}

function asLiteral(value: unknown): Literal {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value as Literal;
  throw new CellSyntaxError(`${JSON.stringify(value)} is not a literal`);
}

function parseNumber(text: string): number {
  const t = text.trim();
  if (!NUMBER.test(t)) throw new CellSyntaxError(`"${t}" is not a number`);
  return Number(t);
}

function parseLiteral(text: string): Literal {
  const t = text.trim();
  if (t === '') throw new CellSyntaxError('missing value');
  if (NUMBER.test(t)) return Number(t);
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null') return null;
  if (t.startsWith('"')) {
    try {
      const s = JSON.parse(t);
      if (typeof s === 'string') return s;
    } catch {
      /* reported below */
    }
    throw new CellSyntaxError(`bad string ${t}`);
  }
  if (t.startsWith("'") && t.endsWith("'") && t.length >= 2 && !t.slice(1, -1).includes("'")) return t.slice(1, -1);
  if (BARE_WORD.test(t)) return t;
  throw new CellSyntaxError(`cannot read "${t}" (quote strings that are not single words)`);
}

/** Splits `"A", 'B', 3` on commas outside quotes. */
function parseList(text: string): Literal[] {
  const parts: string[] = [];
  let current = '';
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      current += c;
      if (c === '\\' && quote === '"') {
        current += text[++i] ?? '';
        continue;
      }
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
      current += c;
    } else if (c === ',') {
      parts.push(current);
      current = '';
    } else current += c;
  }
  if (quote) throw new CellSyntaxError('unterminated string');
  parts.push(current);
  if (parts.length === 1 && parts[0].trim() === '') return [];
  return parts.map(parseLiteral);
}

function checkType(test: CellTest, type: TableColumnType): void {
  if (test.kind === 'all') {
    test.tests.forEach((t) => {
      checkType(t, type);
    });
    return;
  }
  const wanted = type === 'NUMBER' ? 'number' : type === 'STRING' ? 'string' : type === 'BOOLEAN' ? 'boolean' : null;
  if ((test.kind === 'cmp' || test.kind === 'range') && wanted && wanted !== 'number') {
    throw new CellSyntaxError(`comparisons and ranges need a NUMBER column, this one is ${type}`);
  }
  const literals = test.kind === 'eq' ? [test.value] : test.kind === 'in' ? test.values : [];
  for (const literal of literals) {
    if (literal !== null && wanted && typeof literal !== wanted) {
      throw new CellSyntaxError(`${JSON.stringify(literal)} is not a ${type.toLowerCase()} (column type ${type})`);
    }
  }
}

/** JS source for the test applied to the variable named `v` (a generated identifier). */
export function cellToJs(test: CellTest, v: string): string {
  switch (test.kind) {
    case 'any':
      return 'true';
    case 'cmp':
      return `(typeof ${v} === "number" && ${v} ${test.op} ${JSON.stringify(test.value)})`;
    case 'range':
      return `(typeof ${v} === "number" && ${v} ${test.minInclusive ? '>=' : '>'} ${JSON.stringify(test.min)} && ${v} ${test.maxInclusive ? '<=' : '<'} ${JSON.stringify(test.max)})`;
    case 'eq': {
      const js = test.value === null ? `${v} == null` : `${v} === ${JSON.stringify(test.value)}`;
      return test.negate ? `!(${js})` : `(${js})`;
    }
    case 'in': {
      const js =
        test.values.length === 0
          ? 'false'
          : test.values.map((x) => (x === null ? `${v} == null` : `${v} === ${JSON.stringify(x)}`)).join(' || ');
      return test.negate ? `!(${js})` : `(${js})`;
    }
    case 'all':
      return `(${test.tests.map((t) => cellToJs(t, v)).join(' && ')})`;
  }
}
