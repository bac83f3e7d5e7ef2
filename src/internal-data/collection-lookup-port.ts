import { LRUCache } from 'lru-cache';
import type { LookupPort, LookupRequest, LookupResult } from '../engine/ports.js';
import { PortUnavailableError } from '../engine/errors/port-unavailable-error.js';
import { isDatabaseUnavailable } from '../db/mysql-errors.js';
import { COLLECTION_NAME, ROW_ID_COLUMN } from './collection-rules.js';
import { toColumnValue, type ColumnSpec } from './column-types.js';
import type { InternalDataStore } from './internal-data-store.js';

/** A registry entry prepared for lookups: SQL text per (key column, selected columns, mode) built once. */
interface LookupTarget {
  table: string;
  columns: Map<string, ColumnSpec>;
  columnNames: string[];
  indexedColumns: string[];
  statements: Map<string, { sql: string; booleans: string[] }>;
}

/**
 * The engine's LookupPort over collections: `SELECT cols FROM idc_<id> WHERE key = ? [LIMIT 1]`.
 * Registry entries (and the SQL built from them) are cached per (owner, collection) for `ttlMs`
 * (default 1 s); loads and deletes in this process invalidate them at once.
 */
export class CollectionLookupPort implements LookupPort {
  private readonly cache: LRUCache<string, LookupTarget | 'none'>;

  constructor(
    private readonly store: InternalDataStore,
    ttlMs = 1000,
  ) {
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(ttlMs, 1) });
  }

  invalidate(ownerId: number, collection: string): void {
    this.cache.delete(`${ownerId}\u0000${collection}`);
  }

  async describe(request: {
    ownerId: number;
    collection: string;
  }): Promise<{ columns: string[]; indexedColumns: string[] } | null> {
    const target = await this.target(request.ownerId, request.collection);
    return target ? { columns: [...target.columnNames], indexedColumns: [...target.indexedColumns] } : null;
  }

  async lookup(request: LookupRequest): Promise<LookupResult> {
    try {
      return await this.lookupRows(request);
    } catch (error) {
      // MySQL being down is not the scenario's failure: the run is abandoned (503 / retried), not failed.
      if (isDatabaseUnavailable(error))
        throw new PortUnavailableError(
          'database',
          `The database is unavailable for a lookup in "${request.collection}".`,
          { cause: error },
        );
      throw error;
    }
  }

  private async lookupRows(request: LookupRequest): Promise<LookupResult> {
    const target = await this.target(request.ownerId, request.collection);
    if (!target) throw new Error(`Collection "${request.collection}" does not exist (or was deleted).`);
    const keyColumn = target.columns.get(request.keyColumn);
    if (!keyColumn) throw new Error(`Collection "${request.collection}" has no column "${request.keyColumn}".`);
    const statement = this.statement(target, request);
    const key = toColumnValue(request.key, keyColumn.type);
    // A key the column cannot hold matches nothing (MySQL would turn 'abc' into 0 for a number column).
    if (key === undefined) return request.mode === 'ONE' ? null : [];
    const [rows] = (await this.store.db.raw(statement.sql, [
      typeof key === 'bigint' ? key.toString() : key,
    ])) as unknown as [Record<string, unknown>[], unknown];
    for (const row of rows) {
      for (const column of statement.booleans) if (row[column] !== null) row[column] = Boolean(row[column]);
    }
    if (request.mode === 'ONE') return rows[0] ?? null;
    return rows;
  }

  private statement(target: LookupTarget, request: LookupRequest): { sql: string; booleans: string[] } {
    const selected = request.columns && request.columns.length > 0 ? request.columns : target.columnNames;
    const id = `${request.mode}\u0000${request.keyColumn}\u0000${selected.join('\u0000')}`;
    let statement = target.statements.get(id);
    if (statement) return statement;
    const unknown = selected.filter((column) => !target.columns.has(column));
    if (unknown.length > 0)
      throw new Error(
        `Collection has no column${unknown.length > 1 ? 's' : ''} ${unknown.map((column) => `"${column}"`).join(', ')}.`,
      );
    // Identifiers are quoted once here; the key stays a `?` placeholder bound on each lookup.
    const sql = this.store.db
      .raw(
        `SELECT ${selected.map(() => '??').join(', ')} FROM ?? WHERE ?? = \\? ORDER BY ??${request.mode === 'ONE' ? ' LIMIT 1' : ''}`,
        [...selected, target.table, request.keyColumn, ROW_ID_COLUMN],
      )
      .toQuery();
    statement = { sql, booleans: selected.filter((column) => target.columns.get(column)?.type === 'BOOLEAN') };
    if (target.statements.size < 256) target.statements.set(id, statement);
    return statement;
  }

  private async target(ownerId: number, collection: string): Promise<LookupTarget | undefined> {
    if (typeof collection !== 'string' || !COLLECTION_NAME.test(collection)) return undefined;
    const cacheKey = `${ownerId}\u0000${collection}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached === 'none' ? undefined : cached;
    const record = await this.store.find(ownerId, collection);
    if (!record) {
      this.cache.set(cacheKey, 'none');
      return undefined;
    }
    const indexes = await this.store.indexes(record.table);
    const target: LookupTarget = {
      table: record.table,
      columns: new Map(record.columns.map((column) => [column.name, column])),
      columnNames: record.columns.map((column) => column.name),
      indexedColumns: [...new Set(indexes.map((index) => index.columns[0]))],
      statements: new Map(),
    };
    this.cache.set(cacheKey, target);
    return target;
  }
}
