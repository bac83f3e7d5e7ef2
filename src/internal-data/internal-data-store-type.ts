import type { StoreTransaction } from '../db/store-transaction.js';
import type { ColumnSpec } from './column-types.js';
import type { CollectionRecord, IndexRecord, LocalLoadResult } from './internal-data-store.js';
import type { CellValue } from './row-encoder.js';

/** Encoded rows bound for `table`, their cells in the order of `columns`, numbered (`_row_id`) from `firstRowId`. */
export interface NumberedRows<Rows> {
  table: string;
  columns: readonly string[];
  firstRowId: number;
  rows: Rows;
}

/** A filter of a page or count: equality with a value already converted to the column's type, or IS NULL for null. */
export interface ColumnFilter {
  column: string;
  value: unknown;
}

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
  page(
    table: string,
    select: readonly string[],
    filters: readonly ColumnFilter[],
    limit: number,
    offset: number,
  ): Promise<Record<string, unknown>[]>;
  count(table: string, filters: readonly ColumnFilter[]): Promise<number>;
}

/** A registry change of a load: the columns the table holds now, its rows, the file they came from. */
export interface EntryChange {
  columns: ColumnSpec[];
  rowCount: number;
  fileName: string;
}

/**
 * The write side of internal data, as the service's loads and deletes use it. Registry writes take a transaction
 * (`begin`, then `commit` or `rollback`); table DDL commits on its own, as MySQL's does; rows go in inside a
 * transaction (appends) or on their own (a new collection, whose table nobody sees before its entry commits).
 * Implemented by InternalDataStore; the fast path (`LOAD DATA LOCAL INFILE` and staging tables) is MySQL's
 * alone: a store without it answers `localInfileEnabled` false, and the service inserts rows instead.
 */
interface CollectionWrites {
  /** Begins a transaction; `readCommitted` for an append through a staging table created after its first read. */
  begin(options?: { readCommitted?: boolean }): Promise<StoreTransaction>;
  commit(trx: StoreTransaction): Promise<void>;
  rollback(trx: StoreTransaction): Promise<void>;
  /** The entry, locked against other loads and deletes until `trx` ends. */
  findForUpdate(trx: StoreTransaction, ownerId: number, name: string): Promise<CollectionRecord | undefined>;
  /** Reserves the name (invisible to others until `trx` commits); a name the owner has fails with ER_DUP_ENTRY. Answers the entry's id. */
  insertEntry(trx: StoreTransaction, entry: { ownerId: number; name: string; fileName: string }): Promise<number>;
  updateEntry(trx: StoreTransaction, id: number, change: EntryChange): Promise<void>;
  deleteEntry(trx: StoreTransaction, id: number): Promise<void>;
  /** The collection table, with a `_row_id` primary key giving load order. */
  createTable(table: string, columns: ColumnSpec[]): Promise<void>;
  /** Drops the table if it exists. */
  dropTable(table: string): Promise<void>;
  /** A unique index over duplicated values fails with ER_DUP_ENTRY ("Duplicate entry 'value' for key 'name'") and adds nothing. */
  addIndex(table: string, index: { name: string; column: string; unique: boolean }): Promise<void>;
  dropIndex(table: string, name: string): Promise<void>;
  /** Several indexes, all or none (a duplicate fails as addIndex does). */
  addIndexes(
    table: string,
    indexes: ReadonlyArray<{ name: string; columns: readonly string[]; unique: boolean }>,
  ): Promise<void>;
  /** Collection and staging tables older than `olderThanSeconds` that no entry owns (left by a load that died). */
  orphanTables(olderThanSeconds: number): Promise<string[]>;
  /** The highest `_row_id` of the table as `trx` sees it (0 when empty). */
  maxRowId(trx: StoreTransaction, table: string): Promise<number>;
  /**
   * Inserts encoded rows numbered from `firstRowId`, inside `trx` or on their own; a value a unique index holds
   * already fails with ER_DUP_ENTRY naming the value and the index, and inserts none of the rows.
   */
  insertRows(trx: StoreTransaction | undefined, rows: NumberedRows<readonly CellValue[][]>): Promise<void>;
  /** Whether `LOAD DATA LOCAL INFILE` is available (the fast path). */
  localInfileEnabled(): Promise<boolean>;
  loadLocal(rows: NumberedRows<AsyncIterable<CellValue[][]>>): Promise<LocalLoadResult>;
  stagingTableName(collectionId: number): string;
  firstSharedValue(staging: string, target: string, columns: readonly string[]): Promise<string | undefined>;
  insertFromStaging(
    trx: StoreTransaction,
    target: string,
    staging: string,
    columns: readonly string[],
  ): Promise<number>;
}

/** Everything internal data stores: what InternalDataService takes. */
export type CollectionStore = CollectionReads & CollectionWrites;
