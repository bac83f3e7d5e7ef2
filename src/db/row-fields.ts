/**
 * The part of a store's mapping between rows and records that only renames: snake_case columns to camelCase
 * fields (reads) and back (writes). Conversions (dates, JSON, booleans) stay in each store's mapper.
 */

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** The columns of a row under their camelCase names, with their types. */
export type CamelCased<T> = { [K in keyof T & string as CamelCase<K>]: T[K] };

const camelNames = new Map<string, string>();
const snakeNames = new Map<string, string>();

function renamed(name: string, names: Map<string, string>, rename: (name: string) => string): string {
  let to = names.get(name);
  if (to === undefined) {
    to = rename(name);
    names.set(name, to);
  }
  return to;
}

/** The given columns of a row, under their camelCase names (`created_at` → `createdAt`). */
export function camelCased<T, K extends keyof T & string>(row: T, columns: readonly K[]): CamelCased<Pick<T, K>> {
  const fields: Record<string, unknown> = {};
  for (const column of columns)
    fields[renamed(column, camelNames, (name) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()))] =
      row[column];
  return fields as CamelCased<Pick<T, K>>;
}

/** The given fields of a record, under their snake_case column names (`userId` → `user_id`). */
export function snakeCased<T, K extends keyof T & string>(record: T, fields: readonly K[]): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  for (const field of fields)
    columns[renamed(field, snakeNames, (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))] = record[field];
  return columns;
}
