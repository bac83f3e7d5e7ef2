import type { CollectionRecord, IndexRecord } from './internal-data-store.js';

/** A filter of a page or count: equality with a value already converted to the column's type, or IS NULL for null. */
export interface ColumnFilter { column: string; value: unknown }

/**
 * The read side of internal data: the registry and a collection table's rows and indexes. Implemented by
 * InternalDataStore over MySQL (which also holds the writes: DDL, LOAD DATA, staging tables, all used by the
 * service inside its own transactions); tests run one contract suite on it and on an in-memory fake
 * (test/internal-data/support/).
 *
 * Reading a table that does not exist (its collection was deleted meanwhile) fails with ER_NO_SUCH_TABLE
 * (errno 1146), which the service answers as 404.
 */
export interface CollectionReads {
  /** The owner's collections in binary name order. */
  list(ownerId: number): Promise<CollectionRecord[]>;
  find(ownerId: number, name: string): Promise<CollectionRecord | undefined>;
  /** The table's indexes, the primary key excepted, by name, columns in index order. */
  indexes(table: string): Promise<IndexRecord[]>;
  /** Rows in load order: the `select` columns of those matching every filter, `limit` after `offset` (non-negative safe integers, else RangeError). */
  page(table: string, select: readonly string[], filters: readonly ColumnFilter[], limit: number, offset: number): Promise<Record<string, unknown>[]>;
  count(table: string, filters: readonly ColumnFilter[]): Promise<number>;
}
