import { randomBytes } from 'node:crypto';
import { ER_DUP_ENTRY, ER_NO_SUCH_TABLE } from '../../../src/db/mysql-errors.js';
import type { StoreTransaction } from '../../../src/db/store-transaction.js';
import { ROW_ID_COLUMN, tableName } from '../../../src/internal-data/collection-rules.js';
import type { ColumnSpec } from '../../../src/internal-data/column-types.js';
import type {
  CollectionStore,
  ColumnFilter,
  EntryChange,
} from '../../../src/internal-data/internal-data-store-type.js';
import type { CollectionRecord, IndexRecord, LocalLoadResult } from '../../../src/internal-data/internal-data-store.js';
import type { CellValue } from '../../../src/internal-data/row-encoder.js';
import type { NumberedRows } from '../../../src/internal-data/internal-data-store-type.js';
import { copyOf } from '../../support/fake-transactions.js';

type Row = Record<string, unknown>;
/** A collection table: its rows as MySQL answers them (see sqlValue), by `_row_id`, its indexes, when it was made. */
interface FakeTable {
  columns: ColumnSpec[];
  rows: Row[];
  indexes: IndexRecord[];
  createdAt: number;
}
interface Entry {
  id: number;
  ownerId: number;
  name: string;
  columns: ColumnSpec[];
  rowCount: number;
  fileName: string | null;
  createdAt: Date;
  updatedAt: Date;
}
/** What a transaction changed, applied when it commits: the registry as it sees it, and rows it inserted per table. */
interface Pending {
  entries: Entry[];
  rows: Map<string, Row[]>;
}

/** A cell as mysql2 reads it back (supportBigNumbers): BIGINT a number, or a string past 2^53; DOUBLE and BOOLEAN numbers; text a string. */
function sqlValue(cell: CellValue, sqlType: string): unknown {
  if (cell === null) return null;
  if (sqlType === 'BIGINT') {
    const value = BigInt(cell);
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (sqlType === 'DOUBLE' || sqlType === 'BOOLEAN') return Number(cell);
  return cell;
}

/** `cell = value` as MySQL compares a typed column with a bound value (strings binary, booleans as 1/0, bigints exactly). */
function matches(cell: unknown, value: unknown): boolean {
  if (value === null) return cell === null;
  if (cell === null) return false;
  if (typeof value === 'bigint') return BigInt(cell as string | number) === value;
  if (typeof value === 'boolean') return cell === (value ? 1 : 0);
  if (typeof value === 'number') return Number(cell) === value;
  return cell === value;
}

function mysqlError(errno: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { errno, code, sqlMessage: message });
}
const noSuchTable = (table: string) =>
  mysqlError(ER_NO_SUCH_TABLE, 'ER_NO_SUCH_TABLE', `Table '${table}' doesn't exist`);
const duplicateEntry = (value: string, key: string) =>
  mysqlError(ER_DUP_ENTRY, 'ER_DUP_ENTRY', `Duplicate entry '${value}' for key '${key}'`);

/**
 * Internal data's store in memory, for fast tests of loads and reads; held to the same contracts as
 * InternalDataStore (collection-reads-contract.ts, collection-writes-contract.ts). It has no `LOAD DATA LOCAL
 * INFILE` (`localInfileEnabled` is false: the service inserts rows, its fallback on such servers). Transactions run
 * one at a time (as if each locked the registry); DDL applies at once, as MySQL's commits on its own.
 */
export class FakeInternalDataStore implements CollectionStore {
  private entries: Entry[] = [];
  private readonly owners = new Map<number, string>();
  private readonly tables = new Map<string, FakeTable>();
  private readonly open = new Map<StoreTransaction, Pending>();
  private lock: Promise<void> = Promise.resolve();
  private nextId = 1;

  addOwner(id: number, username: string): this {
    this.owners.set(id, username);
    return this;
  }

  /** A collection as a load leaves it, made at once (rows as the row encoder writes them). */
  addCollection(
    owner: { id: number; username: string },
    name: string,
    columns: ColumnSpec[],
    rows: CellValue[][],
    indexes: IndexRecord[] = [],
    fileName = `${name}.csv`,
  ): CollectionRecord {
    this.addOwner(owner.id, owner.username);
    const now = new Date();
    const entry: Entry = {
      id: this.nextId++,
      ownerId: owner.id,
      name,
      columns: copyOf(columns),
      rowCount: rows.length,
      fileName,
      createdAt: now,
      updatedAt: now,
    };
    this.entries.push(entry);
    this.tables.set(tableName(entry.id), {
      columns: copyOf(columns),
      rows: rows.map((row, index) =>
        this.toRow(
          columns,
          columns.map((c) => c.name),
          index + 1,
          row,
        ),
      ),
      indexes: copyOf(indexes),
      createdAt: Date.now(),
    });
    return this.record(entry);
  }

  /** Deletes a collection's entry and table at once. */
  dropCollection(ownerId: number, name: string): void {
    const entry = this.entries.find((e) => e.ownerId === ownerId && e.name === name);
    if (!entry) return;
    this.tables.delete(tableName(entry.id));
    this.entries = this.entries.filter((e) => e !== entry);
  }

  // ── reads (what other requests see: committed entries and rows) ──

  async list(ownerId: number): Promise<CollectionRecord[]> {
    return this.entries
      .filter((e) => e.ownerId === ownerId)
      .sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)))
      .map((e) => this.record(e));
  }

  async find(ownerId: number, name: string): Promise<CollectionRecord | undefined> {
    const found = this.entries.find((e) => e.ownerId === ownerId && e.name === name);
    return found && this.record(found);
  }

  async indexes(table: string): Promise<IndexRecord[]> {
    return copyOf(this.table(table).indexes).sort((a, b) => a.name.localeCompare(b.name));
  }

  async page(
    table: string,
    select: readonly string[],
    filters: readonly ColumnFilter[],
    limit: number,
    offset: number,
  ): Promise<Record<string, unknown>[]> {
    if (!Number.isSafeInteger(limit) || limit < 0 || !Number.isSafeInteger(offset) || offset < 0)
      throw new RangeError(`page bounds must be non-negative safe integers, not limit ${limit}, offset ${offset}`);
    return this.matching(table, filters)
      .slice(offset, offset + limit)
      .map((row) => Object.fromEntries(select.map((column) => [column, row[column]])));
  }

  async count(table: string, filters: readonly ColumnFilter[]): Promise<number> {
    return this.matching(table, filters).length;
  }

  // ── transactions and the registry ──

  async begin(): Promise<StoreTransaction> {
    let release!: () => void;
    const previous = this.lock;
    this.lock = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    const trx = { release } as unknown as StoreTransaction;
    this.open.set(trx, { entries: copyOf(this.entries), rows: new Map() });
    return trx;
  }

  async commit(trx: StoreTransaction): Promise<void> {
    const pending = this.pending(trx);
    this.entries = pending.entries;
    for (const [table, rows] of pending.rows) this.tables.get(table)?.rows.push(...rows);
    this.end(trx);
  }

  async rollback(trx: StoreTransaction): Promise<void> {
    this.pending(trx);
    this.end(trx);
  }

  async findForUpdate(trx: StoreTransaction, ownerId: number, name: string): Promise<CollectionRecord | undefined> {
    const found = this.pending(trx).entries.find((e) => e.ownerId === ownerId && e.name === name);
    return found && this.record(found);
  }

  async insertEntry(
    trx: StoreTransaction,
    entry: { ownerId: number; name: string; fileName: string },
  ): Promise<number> {
    const { entries } = this.pending(trx);
    if (entries.some((e) => e.ownerId === entry.ownerId && e.name === entry.name))
      throw duplicateEntry(`${entry.ownerId}-${entry.name}`, 'internal_collections_owner_id_name_unique');
    const now = new Date();
    const id = this.nextId++;
    entries.push({
      id,
      ownerId: entry.ownerId,
      name: entry.name,
      columns: [],
      rowCount: 0,
      fileName: entry.fileName,
      createdAt: now,
      updatedAt: now,
    });
    return id;
  }

  async updateEntry(trx: StoreTransaction, id: number, change: EntryChange): Promise<void> {
    const found = this.pending(trx).entries.find((e) => e.id === id);
    if (found)
      Object.assign(found, {
        columns: copyOf(change.columns),
        rowCount: change.rowCount,
        fileName: change.fileName,
        updatedAt: new Date(),
      });
  }

  async deleteEntry(trx: StoreTransaction, id: number): Promise<void> {
    const pending = this.pending(trx);
    pending.entries = pending.entries.filter((e) => e.id !== id);
  }

  // ── tables (DDL applies at once) ──

  async createTable(table: string, columns: ColumnSpec[]): Promise<void> {
    if (this.tables.has(table)) throw mysqlError(1050, 'ER_TABLE_EXISTS_ERROR', `Table '${table}' already exists`);
    this.tables.set(table, { columns: copyOf(columns), rows: [], indexes: [], createdAt: Date.now() });
  }

  async dropTable(table: string): Promise<void> {
    this.tables.delete(table);
  }

  async addIndex(table: string, index: { name: string; column: string; unique: boolean }): Promise<void> {
    await this.addIndexes(table, [{ name: index.name, columns: [index.column], unique: index.unique }]);
  }

  async dropIndex(table: string, name: string): Promise<void> {
    const found = this.table(table);
    if (!found.indexes.some((i) => i.name === name))
      throw mysqlError(1091, 'ER_CANT_DROP_FIELD_OR_KEY', `Can't DROP INDEX \`${name}\`; check that it exists`);
    found.indexes = found.indexes.filter((i) => i.name !== name);
  }

  async addIndexes(
    table: string,
    indexes: ReadonlyArray<{ name: string; columns: readonly string[]; unique: boolean }>,
  ): Promise<void> {
    const found = this.table(table);
    for (const index of indexes) {
      if (found.indexes.some((i) => i.name.toLowerCase() === index.name.toLowerCase()))
        throw mysqlError(1061, 'ER_DUP_KEYNAME', `Duplicate key name '${index.name}'`);
      if (index.unique)
        this.refuseDuplicates(found.rows, { name: index.name, columns: [...index.columns], unique: true });
    }
    found.indexes.push(...indexes.map((i) => ({ name: i.name, columns: [...i.columns], unique: i.unique })));
  }

  async orphanTables(olderThanSeconds: number): Promise<string[]> {
    const owned = new Set(this.entries.map((e) => tableName(e.id)));
    const cutoff = Date.now() - olderThanSeconds * 1000;
    return [...this.tables]
      .filter(
        ([name, t]) =>
          (name.startsWith('idcstage_') || (name.startsWith('idc_') && !owned.has(name))) && t.createdAt < cutoff,
      )
      .map(([name]) => name);
  }

  async maxRowId(trx: StoreTransaction, table: string): Promise<number> {
    const rows = [...this.table(table).rows, ...(this.pending(trx).rows.get(table) ?? [])];
    return rows.reduce((max, row) => Math.max(max, row[ROW_ID_COLUMN] as number), 0);
  }

  async insertRows(
    trx: StoreTransaction | undefined,
    { table, columns, firstRowId, rows }: NumberedRows<readonly CellValue[][]>,
  ): Promise<void> {
    if (rows.length === 0) return;
    const found = this.table(table);
    const pending = trx ? this.pending(trx) : undefined;
    const before = [...found.rows, ...(pending?.rows.get(table) ?? [])];
    const added = rows.map((row, index) => this.toRow(found.columns, columns, firstRowId + index, row));
    // One statement: a duplicate anywhere inserts none of its rows.
    this.refuseDuplicates([...before, ...added], { name: 'PRIMARY', columns: [ROW_ID_COLUMN], unique: true });
    for (const index of found.indexes.filter((i) => i.unique)) this.refuseDuplicates([...before, ...added], index);
    if (pending) pending.rows.set(table, [...(pending.rows.get(table) ?? []), ...added]);
    else found.rows.push(...added);
  }

  // ── the fast path: not in the fake ──

  async localInfileEnabled(): Promise<boolean> {
    return false;
  }

  loadLocal(): Promise<LocalLoadResult> {
    return Promise.reject(new Error('the fake store has no LOAD DATA LOCAL INFILE (localInfileEnabled is false)'));
  }

  stagingTableName(collectionId: number): string {
    return `idcstage_${collectionId}_${randomBytes(6).toString('hex')}`;
  }

  firstSharedValue(): Promise<string | undefined> {
    return Promise.reject(new Error('the fake store has no staging path'));
  }

  insertFromStaging(): Promise<number> {
    return Promise.reject(new Error('the fake store has no staging path'));
  }

  private record(entry: Entry): CollectionRecord {
    return copyOf({ ...entry, owner: this.owners.get(entry.ownerId) ?? '', table: tableName(entry.id) });
  }

  private pending(trx: StoreTransaction): Pending {
    const found = this.open.get(trx);
    if (!found) throw new Error('this transaction has ended');
    return found;
  }

  private end(trx: StoreTransaction): void {
    this.open.delete(trx);
    (trx as unknown as { release(): void }).release();
  }

  private table(table: string): FakeTable {
    const found = this.tables.get(table);
    if (!found) throw noSuchTable(table);
    return found;
  }

  private toRow(specs: ColumnSpec[], columns: readonly string[], rowId: number, cells: CellValue[]): Row {
    const row: Row = { [ROW_ID_COLUMN]: rowId };
    for (const spec of specs) row[spec.name] = null;
    columns.forEach((name, i) => {
      const spec = specs.find((s) => s.name === name);
      if (!spec) throw mysqlError(1054, 'ER_BAD_FIELD_ERROR', `Unknown column '${name}' in 'field list'`);
      row[name] = sqlValue(cells[i], spec.sqlType);
    });
    return row;
  }

  /** A unique index over these rows: the first value seen twice fails as MySQL's ER_DUP_ENTRY does (NULLs never clash). */
  private refuseDuplicates(rows: Row[], index: IndexRecord): void {
    const seen = new Set<string>();
    for (const row of rows) {
      const values = index.columns.map((c) => row[c]);
      if (values.some((v) => v === null || v === undefined)) continue;
      const key = values.map((v) => String(v)).join('-');
      if (seen.has(key)) throw duplicateEntry(key, index.name);
      seen.add(key);
    }
  }

  private matching(table: string, filters: readonly ColumnFilter[]): Row[] {
    return this.table(table).rows.filter((row) => filters.every((filter) => matches(row[filter.column], filter.value)));
  }
}
