import { ER_NO_SUCH_TABLE } from '../../../src/db/mysql-errors.js';
import { ROW_ID_COLUMN, tableName } from '../../../src/internal-data/collection-rules.js';
import type { ColumnSpec } from '../../../src/internal-data/column-types.js';
import type { CollectionReads, ColumnFilter } from '../../../src/internal-data/internal-data-store-type.js';
import type { CollectionRecord, IndexRecord } from '../../../src/internal-data/internal-data-store.js';
import type { CellValue } from '../../../src/internal-data/row-encoder.js';
import { copyOf } from '../../support/fake-transactions.js';

/** What a collection table holds: its rows as MySQL answers them (see sqlValue), by `_row_id`, and its indexes. */
interface FakeTable { columns: ColumnSpec[]; rows: Array<Record<string, unknown>>; indexes: IndexRecord[] }

/** A cell as mysql2 reads it back (supportBigNumbers): BIGINT a number, or a string past 2^53; DOUBLE and BOOLEAN numbers; text a string. */
function sqlValue(cell: CellValue, sqlType: string): unknown {
  if (cell === null) return null;
  if (sqlType === 'BIGINT') {
    const value = BigInt(cell);
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
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

function noSuchTable(table: string): Error {
  return Object.assign(new Error(`Table '${table}' doesn't exist`), { errno: ER_NO_SUCH_TABLE, code: 'ER_NO_SUCH_TABLE' });
}

/**
 * CollectionReads in memory, for fast tests of what reads collections; held to the same contract as
 * InternalDataStore (collection-reads-contract.ts). Collections are made with `addCollection`, from rows
 * as the row encoder writes them (CellValue text), the way a load inserts them.
 */
export class FakeCollectionReads implements CollectionReads {
  private readonly records: CollectionRecord[] = [];
  private readonly tables = new Map<string, FakeTable>();
  private nextId = 1;

  addCollection(owner: { id: number; username: string }, name: string, columns: ColumnSpec[], rows: CellValue[][], indexes: IndexRecord[] = [], fileName = `${name}.csv`): CollectionRecord {
    const id = this.nextId++;
    const now = new Date();
    const record: CollectionRecord = { id, ownerId: owner.id, owner: owner.username, name, table: tableName(id), columns: copyOf(columns), rowCount: rows.length, fileName, createdAt: now, updatedAt: now };
    this.records.push(record);
    this.tables.set(record.table, {
      columns: copyOf(columns),
      rows: rows.map((row, index) => Object.fromEntries([[ROW_ID_COLUMN, index + 1], ...columns.map((column, i) => [column.name, sqlValue(row[i], column.sqlType)])])),
      indexes: copyOf(indexes),
    });
    return copyOf(record);
  }

  /** What deleting a collection leaves for a reader that read the registry before: a table that is gone. */
  dropCollection(ownerId: number, name: string): void {
    const index = this.records.findIndex((r) => r.ownerId === ownerId && r.name === name);
    if (index < 0) return;
    this.tables.delete(this.records[index].table);
    this.records.splice(index, 1);
  }

  async list(ownerId: number): Promise<CollectionRecord[]> {
    return this.records.filter((r) => r.ownerId === ownerId).sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name))).map(copyOf);
  }

  async find(ownerId: number, name: string): Promise<CollectionRecord | undefined> {
    const found = this.records.find((r) => r.ownerId === ownerId && r.name === name);
    return found && copyOf(found);
  }

  async indexes(table: string): Promise<IndexRecord[]> {
    return copyOf(this.table(table).indexes).sort((a, b) => a.name.localeCompare(b.name));
  }

  async page(table: string, select: readonly string[], filters: readonly ColumnFilter[], limit: number, offset: number): Promise<Record<string, unknown>[]> {
    if (!Number.isSafeInteger(limit) || limit < 0 || !Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`page bounds must be non-negative safe integers, not limit ${limit}, offset ${offset}`);
    return this.matching(table, filters).slice(offset, offset + limit).map((row) => Object.fromEntries(select.map((column) => [column, row[column]])));
  }

  async count(table: string, filters: readonly ColumnFilter[]): Promise<number> {
    return this.matching(table, filters).length;
  }

  private table(table: string): FakeTable {
    const found = this.tables.get(table);
    if (!found) throw noSuchTable(table);
    return found;
  }

  private matching(table: string, filters: readonly ColumnFilter[]): Array<Record<string, unknown>> {
    return this.table(table).rows.filter((row) => filters.every((filter) => matches(row[filter.column], filter.value)));
  }
}
