/** The spec's CollectionColumnType. */
export type CollectionColumnType = 'INTEGER' | 'DOUBLE' | 'BOOLEAN' | 'STRING';

/** A column of a collection as kept in the registry (`sqlType` is how the table declares it). */
export interface ColumnSpec {
  name: string;
  type: CollectionColumnType;
  nullable: boolean;
  sqlType: string;
}

const INTEGER_TEXT = /^[+-]?(?:0|[1-9]\d*)$/;
const DOUBLE_TEXT = /^[+-]?(?:(?:0|[1-9]\d*)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const BOOLEAN_TEXT = /^(?:true|false)$/i;
const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;

/** Longest strings per SQL type: VARCHAR(255) and VARCHAR(768) can be indexed (768 × 4 bytes = InnoDB's 3,072-byte key limit). */
const STRING_TIERS = [
  { maxChars: 255, sqlType: 'VARCHAR(255)', indexable: true, rowBytes: 255 * 4 + 2 },
  { maxChars: 768, sqlType: 'VARCHAR(768)', indexable: true, rowBytes: 768 * 4 + 2 },
  { maxChars: 16_383, sqlType: 'TEXT', indexable: false, rowBytes: 12 },
  { maxChars: 4_194_303, sqlType: 'MEDIUMTEXT', indexable: false, rowBytes: 12 },
] as const;

/** MySQL's row limit is 65,535 bytes; VARCHARs count at their full size, TEXTs by their pointer. */
const ROW_BYTES_LIMIT = 60_000;

/** Value classes, as bits: a column's classes decide its type. */
export const IS_INTEGER = 1;
export const IS_DOUBLE = 2;
export const IS_BOOLEAN = 4;
export const IS_STRING = 8;

/** How messages name each value class. */
export const CLASS_NAMES: Record<number, string> = {
  [IS_INTEGER]: 'an integer',
  [IS_DOUBLE]: 'a decimal number',
  [IS_BOOLEAN]: 'a boolean',
  [IS_STRING]: 'text',
};

/** Up to 18 digits without a leading zero, optionally signed: an INTEGER, decided without regular expressions (the common case of every pass). */
function isShortInteger(text: string): boolean {
  const end = text.length;
  let position = 0;
  const first = text.charCodeAt(0);
  if (first === 45 || first === 43) position = 1;
  const digits = end - position;
  if (digits <= 0 || digits >= 19) return false;
  const lead = text.charCodeAt(position);
  if (lead === 48) return digits === 1;
  if (lead < 49 || lead > 57) return false;
  for (let index = position + 1; index < end; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

/**
 * What one value looks like. Integers outside BIGINT and integers with leading zeros (`007`, zip
 * codes, identifiers) are text: storing them as numbers would change them.
 */
export function classify(value: string): number {
  if (isShortInteger(value)) return IS_INTEGER;
  const first = value.charCodeAt(0);
  // 0-9 + - .
  if ((first >= 48 && first <= 57) || first === 43 || first === 45 || first === 46) {
    if (INTEGER_TEXT.test(value)) {
      if (value.length < 19) return IS_INTEGER;
      const big = BigInt(value);
      return big >= BIGINT_MIN && big <= BIGINT_MAX ? IS_INTEGER : IS_STRING;
    }
    if (DOUBLE_TEXT.test(value) && Number.isFinite(Number(value))) return IS_DOUBLE;
    return IS_STRING;
  }
  // t T f F
  if ((first === 116 || first === 84 || first === 102 || first === 70) && BOOLEAN_TEXT.test(value)) return IS_BOOLEAN;
  return IS_STRING;
}

/** The narrowest type holding every class seen: INTEGER → DOUBLE → STRING; BOOLEAN mixed with anything else → STRING. */
export function typeOfClasses(classes: number): CollectionColumnType {
  if (classes === 0 || classes & IS_STRING) return 'STRING';
  if (classes & IS_BOOLEAN) return classes === IS_BOOLEAN ? 'BOOLEAN' : 'STRING';
  if (classes & IS_DOUBLE) return 'DOUBLE';
  return 'INTEGER';
}

/** Which value classes a column of this type (and SQL type) accepts. */
export function acceptedClasses(type: CollectionColumnType): number {
  switch (type) {
    case 'INTEGER':
      return IS_INTEGER;
    case 'DOUBLE':
      return IS_INTEGER | IS_DOUBLE;
    case 'BOOLEAN':
      return IS_BOOLEAN;
    case 'STRING':
      return IS_INTEGER | IS_DOUBLE | IS_BOOLEAN | IS_STRING;
  }
}

/** The longest string (in characters) a STRING column of this SQL type holds. */
export function stringCapacity(sqlType: string): number {
  return STRING_TIERS.find((tier) => tier.sqlType === sqlType)?.maxChars ?? 0;
}

export function isIndexable(column: ColumnSpec): boolean {
  if (column.type !== 'STRING') return true;
  return STRING_TIERS.find((tier) => tier.sqlType === column.sqlType)?.indexable ?? false;
}

/**
 * SQL types for inferred columns. Strings get the smallest tier holding their longest value;
 * when the VARCHARs together would break MySQL's row-size limit, the widest become TEXT.
 */
export function sqlTypesFor(columns: Array<{ type: CollectionColumnType; maxLength: number }>): string[] {
  const tierIndex = columns.map((column) =>
    column.type === 'STRING' ? STRING_TIERS.findIndex((tier) => column.maxLength <= tier.maxChars) : -1,
  );
  const rowBytes = () => tierIndex.reduce((sum, tier) => sum + (tier >= 0 ? STRING_TIERS[tier].rowBytes : 8), 0);
  while (rowBytes() > ROW_BYTES_LIMIT) {
    let widest = -1;
    tierIndex.forEach((tier, index) => {
      if (tier >= 0 && tier < 2 && (widest < 0 || tier > tierIndex[widest])) widest = index;
    });
    if (widest < 0) break;
    tierIndex[widest] = 2;
  }
  return columns.map((column, index) => {
    switch (column.type) {
      case 'INTEGER':
        return 'BIGINT';
      case 'DOUBLE':
        return 'DOUBLE';
      case 'BOOLEAN':
        return 'BOOLEAN';
      case 'STRING':
        return STRING_TIERS[tierIndex[index] < 0 ? STRING_TIERS.length - 1 : tierIndex[index]].sqlType;
      default:
        throw new Error(`unknown column type ${String(column.type)}`);
    }
  });
}

/**
 * A query value (a filter, a lookup key) converted to a column's type; `undefined` when it cannot
 * be one (so it matches nothing rather than letting MySQL coerce `'abc'` to 0).
 */
export function toColumnValue(
  value: unknown,
  type: CollectionColumnType,
): string | number | boolean | bigint | undefined {
  if (value === null || value === undefined) return undefined;
  switch (type) {
    case 'INTEGER': {
      if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
      if (typeof value === 'bigint') return value;
      if (typeof value === 'string' && INTEGER_TEXT.test(value.trim())) {
        const text = value.trim();
        return text.length < 16 ? Number(text) : BigInt(text);
      }
      return undefined;
    }
    case 'DOUBLE': {
      if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
      if (typeof value === 'string' && DOUBLE_TEXT.test(value.trim())) return Number(value.trim());
      return undefined;
    }
    case 'BOOLEAN': {
      if (typeof value === 'boolean') return value;
      if (value === 1 || value === 0) return value === 1;
      if (typeof value === 'string' && BOOLEAN_TEXT.test(value.trim())) return value.trim().toLowerCase() === 'true';
      return undefined;
    }
    case 'STRING':
      return typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
          ? String(value)
          : undefined;
  }
}

/** A row read from a collection table, with BOOLEAN columns as booleans (MySQL answers 0/1). */
export function fromSqlRow(row: Record<string, unknown>, booleanColumns: readonly string[]): Record<string, unknown> {
  for (const column of booleanColumns) {
    const value = row[column];
    if (value !== null && value !== undefined) row[column] = Boolean(value);
  }
  return row;
}
