import type { Logger } from 'pino';
import { BadRequestError } from '../errors/bad-request-error.js';
import { ConflictError } from '../errors/conflict-error.js';
import { assertCollectionName, indexName, parseIndexes, tableName, type IndexRequest } from './collection-rules.js';
import {
  acceptedClasses,
  CLASS_NAMES,
  isIndexable,
  sqlTypesFor,
  stringCapacity,
  type ColumnSpec,
} from './column-types.js';
import { CsvFile } from './csv-file.js';
import { retryOnDeadlock } from '../db/deadlock-retry.js';
import { insertRows, DEFAULT_INSERT_TUNING, type InsertTuning } from './csv-inserter.js';
import { profileCsv, VALUE_CLASSES, type CsvProfile } from './csv-profile.js';
import { encodedRows } from './row-encoder.js';
import { localInfileRefused } from '../db/local-infile.js';
import {
  ER_DUP_ENTRY,
  ER_LOCK_DEADLOCK,
  ER_LOCK_WAIT_TIMEOUT,
  ER_NO_SUCH_TABLE,
  mysqlErrno,
} from '../db/mysql-errors.js';
import type { StoreTransaction } from '../db/store-transaction.js';
import type { CollectionStore } from './internal-data-store-type.js';
import type { CollectionRecord } from './internal-data-store.js';
import {
  CollectionReader,
  collectionNotFound,
  toColumnInfo,
  type CollectionInfo,
  type CollectionPage,
  type ColumnInfo,
  type IndexInfo,
  type PageRequest,
} from './collection-reader.js';

export type { CollectionInfo, CollectionPage, ColumnInfo, IndexInfo, PageRequest } from './collection-reader.js';

export interface LoadReport {
  collection: string;
  created: boolean;
  rowsLoaded: number;
  rowCount: number;
  columns: ColumnInfo[];
  indexes: IndexInfo[];
}

export interface LoadRequest {
  ownerId: number;
  collection: string;
  fileName: string;
  /** The `indexes` parameter as sent: `column,true;column2,false`. */
  indexes?: string;
  /** The uploaded CSV on disk. */
  path: string;
}

/** Told when a collection changes in this process, so cached registry entries go stale at once. */
export interface CollectionChangeListener {
  invalidate(ownerId: number, collection: string): void;
}

/** 409 UNIQUE_VIOLATION: the load would put `value` twice into unique index `index`; nothing was loaded. */
function uniqueViolation(index: string, value: string, collection: string): ConflictError {
  const shown = value.slice(0, 200);
  const message = `Unique index "${index}" of collection "${collection}" would hold the value "${shown}" twice; nothing was loaded.`;
  return new ConflictError(message, 'UNIQUE_VIOLATION', [
    { path: `index ${index}`, message: `duplicate value "${shown}"`, index, value: shown },
  ]);
}

/** 409 LOAD_CONFLICT: another request holds the collection (a lock wait timed out, a deadlock, a name taken and dropped while racing). */
function loadConflict(collection: string, reason: string): ConflictError {
  return new ConflictError(
    `Collection "${collection}" is being changed by another request (${reason}); nothing was loaded. Retry when that load is done.`,
    'LOAD_CONFLICT',
    [{ path: 'collection_name', message: reason }],
  );
}

/** Raised inside a create when another request committed the same name first: the load becomes an append. */
class NameRaced extends Error {}

/**
 * Collections: a registry row plus one MySQL table per collection. Loads are all-or-nothing
 * although MySQL DDL commits on its own: a new collection's registry row stays uncommitted (and
 * invisible) until its table is complete, and the table is dropped on any failure; an append
 * inserts inside one transaction, and indexes it added are dropped again if the load fails.
 */
export class InternalDataService {
  constructor(
    private readonly store: CollectionStore,
    private readonly listener: CollectionChangeListener,
    private readonly logger: Logger,
    private readonly tuning: InsertTuning = DEFAULT_INSERT_TUNING,
  ) {
    this.reader = new CollectionReader(store);
  }

  /** The read operations, on the store's read side (collection-reader.ts). */
  private readonly reader: CollectionReader;

  /**
   * Drops tables left by a process that died in the middle of a load (no registry row owns them;
   * older than an hour, so no live load is touched). Run at start-up; answers the tables dropped.
   */
  async removeOrphanTables(olderThanSeconds = 3600): Promise<string[]> {
    const orphans = await this.store.orphanTables(olderThanSeconds);
    for (const table of orphans) await this.store.dropTable(table);
    if (orphans.length > 0) this.logger.warn({ tables: orphans }, 'dropped tables left by interrupted loads');
    return orphans;
  }

  list(ownerId: number): Promise<CollectionInfo[]> {
    return this.reader.list(ownerId);
  }

  /** The owner's collection, or 404: another user's collection does not exist for this owner. */
  get(ownerId: number, collection: string): Promise<CollectionRecord> {
    return this.reader.get(ownerId, collection);
  }

  columns(ownerId: number, collection: string): Promise<ColumnInfo[]> {
    return this.reader.columns(ownerId, collection);
  }

  indexes(ownerId: number, collection: string): Promise<IndexInfo[]> {
    return this.reader.indexes(ownerId, collection);
  }

  rows(ownerId: number, collection: string, request: PageRequest): Promise<CollectionPage> {
    return this.reader.rows(ownerId, collection, request);
  }

  async delete(ownerId: number, collection: string): Promise<void> {
    assertCollectionName(collection);
    // A load of the same collection can make this transaction a deadlock victim (found by npm run fuzz): try again.
    const record = await retryOnDeadlock(() => this.deleteEntry(ownerId, collection));
    this.listener.invalidate(ownerId, collection);
    // After the commit: a crash here leaves an unreachable table, never an entry without a table.
    await this.store.dropTable(record.table);
  }

  /** Removes the registry entry in one transaction; answers it (its table is dropped after the commit). */
  private async deleteEntry(ownerId: number, collection: string): Promise<CollectionRecord> {
    const trx = await this.store.begin();
    try {
      const record = await this.store.findForUpdate(trx, ownerId, collection);
      if (!record) throw collectionNotFound(collection);
      await this.store.deleteEntry(trx, record.id);
      await this.store.commit(trx);
      return record;
    } catch (error) {
      await this.store.rollback(trx).catch(() => undefined);
      throw error;
    }
  }

  /** Creates the collection (201) or appends to it (200); all-or-nothing either way. */
  async load(request: LoadRequest): Promise<LoadReport> {
    assertCollectionName(request.collection);
    const started = performance.now();
    const csv = await CsvFile.open(request.path);
    const profile = await profileCsv(csv);
    this.logger.debug(
      { collection: request.collection, rows: profile.rows, ms: Math.round(performance.now() - started) },
      'first pass done',
    );
    try {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const existing = await this.store.find(request.ownerId, request.collection);
        try {
          return existing ? await this.append(request, csv, profile) : await this.create(request, csv, profile);
        } catch (error) {
          if (!(error instanceof NameRaced)) throw error;
        }
      }
      throw loadConflict(request.collection, 'it was created and removed by other requests while this load ran');
    } finally {
      this.listener.invalidate(request.ownerId, request.collection);
    }
  }

  /**
   * Whether this load takes the fast path (`LOAD DATA LOCAL INFILE`): allowed by the tuning and by
   * the server (`@@local_infile`, off by default on MySQL 8). Asked on every load, so a server
   * setting changed at run time is followed.
   */
  private async fastPath(): Promise<boolean> {
    if (!this.tuning.localInfile) return false;
    try {
      if (await this.store.localInfileEnabled()) return true;
      this.logger.info('local_infile is OFF on the database server: loading with multi-row INSERTs');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not read @@local_infile: loading with multi-row INSERTs');
    }
    return false;
  }

  /**
   * Streams the rows into `table` with `LOAD DATA LOCAL INFILE` (each encoded, and so checked
   * again, on the way: row-encoder.ts) and checks that every row arrived unchanged: with LOCAL the
   * server skips a duplicate key and converts a bad value with a warning instead of failing, so any
   * difference between rows sent, rows written and the first pass's count, or any warning, is an
   * error (the caller then drops what was loaded).
   */
  private async loadRows(
    csv: CsvFile,
    table: string,
    columns: ColumnSpec[],
    firstRowId: number,
    expectedRows: number,
  ): Promise<number> {
    const started = performance.now();
    const result = await this.store.loadLocal({
      table,
      columns: columns.map((column) => column.name),
      firstRowId,
      rows: encodedRows(csv, columns),
    });
    const sent = result.rowsSent;
    this.logger.debug(
      { table, rows: sent, ms: Math.round(performance.now() - started) },
      'LOAD DATA LOCAL INFILE done',
    );
    if (sent !== expectedRows || result.affectedRows !== sent || result.warnings !== 0) {
      this.logger.error(
        {
          table,
          expectedRows,
          sent,
          affectedRows: result.affectedRows,
          warnings: result.warnings,
          warningText: result.warningText,
        },
        'LOAD DATA did not load every row unchanged',
      );
      throw new Error(
        `LOAD DATA wrote ${result.affectedRows} of ${sent} rows (${expectedRows} in the first pass) with ${result.warnings} warnings${result.warningText.length > 0 ? `: ${result.warningText.join('; ')}` : ''}`,
      );
    }
    return sent;
  }

  /** The fallback: the rows as multi-row INSERTs with bound values, inside `trx` (appends) or on their own. */
  private insertRows(
    trx: StoreTransaction | undefined,
    csv: CsvFile,
    table: string,
    columns: ColumnSpec[],
    firstRowId: number,
    tuning: InsertTuning,
  ): Promise<number> {
    const names = columns.map((column) => column.name);
    return insertRows(
      encodedRows(csv, columns),
      firstRowId,
      (first, rows) => this.store.insertRows(trx, { table, columns: names, firstRowId: first, rows }),
      tuning,
    );
  }

  private async create(request: LoadRequest, csv: CsvFile, profile: CsvProfile): Promise<LoadReport> {
    const sqlTypes = sqlTypesFor(profile.columns);
    const columns: ColumnSpec[] = profile.columns.map((column, index) => ({
      name: column.name,
      type: column.type,
      nullable: column.nullable,
      sqlType: sqlTypes[index],
    }));
    const wanted = this.indexRequests(request.indexes, columns);
    const fast = await this.fastPath();
    const trx = await this.store.begin();
    let table: string | undefined;
    try {
      let id: number;
      try {
        id = await this.store.insertEntry(trx, {
          ownerId: request.ownerId,
          name: request.collection,
          fileName: request.fileName,
        });
      } catch (error) {
        if (mysqlErrno(error) === ER_DUP_ENTRY) throw new NameRaced();
        throw error;
      }
      table = tableName(id);
      await this.store.createTable(table, columns);
      let rows: number | undefined;
      if (fast) {
        rows = await this.loadRows(csv, table, columns, 1, profile.rows).catch((error: unknown) => {
          if (!localInfileRefused(error)) throw error;
          this.logger.warn({ err: error }, 'LOAD DATA LOCAL INFILE refused: loading with multi-row INSERTs');
          return undefined; // refused before any row was read: the table is still empty
        });
        // After the rows (faster, one pass over the table): LOAD DATA would skip a duplicate
        // silently, ADD UNIQUE INDEX fails on it with ER_DUP_ENTRY naming the index and value.
        if (rows !== undefined)
          await this.store.addIndexes(
            table,
            wanted.map((index) => ({ name: indexName(index), columns: [index.column], unique: index.unique })),
          );
      }
      if (rows === undefined) {
        // Before the rows, so a duplicate is caught by the insert that brings it.
        for (const index of wanted)
          await this.store.addIndex(table, { name: indexName(index), column: index.column, unique: index.unique });
        rows = await this.insertRows(undefined, csv, table, columns, 1, this.tuning);
      }
      await this.store.updateEntry(trx, id, { columns, rowCount: rows, fileName: request.fileName });
      await this.store.commit(trx);
      return {
        collection: request.collection,
        created: true,
        rowsLoaded: rows,
        rowCount: rows,
        columns: columns.map(toColumnInfo),
        indexes: await this.store.indexes(table),
      };
    } catch (error) {
      await this.store.rollback(trx).catch(() => undefined);
      if (table)
        await this.store
          .dropTable(table)
          .catch((dropError: unknown) =>
            this.logger.error({ err: dropError, table }, 'could not drop the table of a failed load'),
          );
      throw this.loadError(error, request.collection);
    }
  }

  private async append(request: LoadRequest, csv: CsvFile, profile: CsvProfile): Promise<LoadReport> {
    const fast = await this.fastPath();
    // READ COMMITTED on the fast path: the staging table is created after the transaction's first
    // read, and a REPEATABLE READ snapshot older than a table cannot read it ("insufficient history").
    // The registry row stays locked (FOR UPDATE) either way, so appends remain serialized.
    const trx = await this.store.begin({ readCommitted: fast });
    const added: string[] = [];
    let record: CollectionRecord | undefined;
    let staging: string | undefined;
    const dropStaging = async () => {
      if (staging)
        await this.store
          .dropTable(staging)
          .catch((dropError: unknown) =>
            this.logger.error({ err: dropError, table: staging }, 'could not drop the staging table of a load'),
          );
    };
    try {
      record = await this.store.findForUpdate(trx, request.ownerId, request.collection);
      if (!record) throw new NameRaced();
      const fileColumns = this.matchColumns(record, profile);
      this.assertValuesFit(fileColumns, profile);
      const wanted = this.indexRequests(request.indexes, record.columns);
      const present = new Set((await this.store.indexes(record.table)).map((index) => index.name.toLowerCase()));
      // DDL commits on its own: added before this transaction touches the table, dropped again on failure.
      for (const index of wanted) {
        const name = indexName(index);
        if (present.has(name.toLowerCase())) continue;
        await this.store.addIndex(record.table, { name, column: index.column, unique: index.unique });
        added.push(name);
      }
      const firstRowId = (await this.store.maxRowId(trx, record.table)) + 1;
      let rows: number | undefined;
      if (fast)
        rows = await this.appendThroughStaging(trx, record, fileColumns, firstRowId, csv, profile, (name) => {
          staging = name;
        });
      if (rows === undefined) {
        rows = await this.insertRows(trx, csv, record.table, fileColumns, firstRowId, {
          ...this.tuning,
          parallelism: 1,
        });
      }
      const nullable = new Map(profile.columns.map((column, index) => [fileColumns[index].name, column.nullable]));
      const columns = record.columns.map((column) => ({
        ...column,
        nullable: column.nullable || (nullable.get(column.name) ?? false),
      }));
      const rowCount = record.rowCount + rows;
      await this.store.updateEntry(trx, record.id, { columns, rowCount, fileName: request.fileName });
      await this.store.commit(trx);
      // After the commit: the transaction read the staging table, so its metadata lock is released only now.
      await dropStaging();
      return {
        collection: request.collection,
        created: false,
        rowsLoaded: rows,
        rowCount,
        columns: columns.map(toColumnInfo),
        indexes: await this.store.indexes(record.table),
      };
    } catch (error) {
      await this.store.rollback(trx).catch(() => undefined);
      await dropStaging();
      for (const name of added) {
        await this.store
          .dropIndex((record as CollectionRecord).table, name)
          .catch((dropError: unknown) =>
            this.logger.error({ err: dropError, name }, 'could not drop an index added by a failed load'),
          );
      }
      if (error instanceof NameRaced) throw error;
      throw this.loadError(error, request.collection);
    }
  }

  /**
   * The fast append: LOAD DATA into a staging table that has no unique index (LOAD DATA LOCAL would
   * skip duplicates silently), then, for every unique index of the collection, the same index on
   * the staging table (a value repeated within the file fails with ER_DUP_ENTRY naming it) and a
   * query for a value the collection already holds; only then are the rows copied in load order,
   * inside the append's transaction. Answers the rows appended, or undefined when the server
   * refused LOAD DATA LOCAL before reading anything (the caller inserts instead). The staging
   * table's name goes to `created` as soon as it exists; the caller drops it after its transaction.
   */
  private async appendThroughStaging(
    trx: StoreTransaction,
    record: CollectionRecord,
    fileColumns: ColumnSpec[],
    firstRowId: number,
    csv: CsvFile,
    profile: CsvProfile,
    created: (table: string) => void,
  ): Promise<number | undefined> {
    const staging = this.store.stagingTableName(record.id);
    await this.store.createTable(staging, record.columns);
    created(staging);
    let rows: number;
    try {
      rows = await this.loadRows(csv, staging, fileColumns, firstRowId, profile.rows);
    } catch (error) {
      if (!localInfileRefused(error)) throw error;
      this.logger.warn({ err: error }, 'LOAD DATA LOCAL INFILE refused: loading with multi-row INSERTs');
      return undefined;
    }
    const unique = (await this.store.indexes(record.table)).filter((index) => index.unique);
    await this.store.addIndexes(staging, unique);
    for (const index of unique) {
      const value = await this.store.firstSharedValue(staging, record.table, index.columns);
      if (value !== undefined) throw uniqueViolation(index.name, value, record.name);
    }
    const moved = await this.store.insertFromStaging(
      trx,
      record.table,
      staging,
      record.columns.map((column) => column.name),
    );
    if (moved !== rows) throw new Error(`copying ${rows} staged rows into ${record.table} inserted ${moved}`);
    return rows;
  }

  /** The table column of each file column (names match ignoring case; order may differ); 400 COLUMNS_MISMATCH naming the differences. */
  private matchColumns(record: CollectionRecord, profile: CsvProfile): ColumnSpec[] {
    const byLowerName = new Map(record.columns.map((column) => [column.name.toLowerCase(), column]));
    const inFile = new Set(profile.header.map((name) => name.toLowerCase()));
    const extra = profile.header.filter((name) => !byLowerName.has(name.toLowerCase()));
    const missing = record.columns
      .filter((column) => !inFile.has(column.name.toLowerCase()))
      .map((column) => column.name);
    if (extra.length > 0 || missing.length > 0) {
      const parts = [
        missing.length > 0
          ? `missing column${missing.length > 1 ? 's' : ''} ${missing.map((name) => `"${name}"`).join(', ')}`
          : '',
        extra.length > 0
          ? `unknown column${extra.length > 1 ? 's' : ''} ${extra.map((name) => `"${name}"`).join(', ')}`
          : '',
      ].filter(Boolean);
      throw new BadRequestError(
        `The file's header does not match collection "${record.name}": ${parts.join('; ')}.`,
        'COLUMNS_MISMATCH',
        [
          ...missing.map((name) => ({ path: 'line 1', message: `missing column "${name}"` })),
          ...extra.map((name) => ({ path: 'line 1', message: `unknown column "${name}"` })),
        ],
      );
    }
    return profile.header.map((name) => byLowerName.get(name.toLowerCase()) as ColumnSpec);
  }

  /** Appends never change column types: a value the column cannot hold is 400 naming its line and column. */
  private assertValuesFit(fileColumns: ColumnSpec[], profile: CsvProfile): void {
    const problems: Array<{ path: string; line: number; message: string }> = [];
    profile.columns.forEach((found, index) => {
      const target = fileColumns[index];
      const accepted = acceptedClasses(target.type);
      let worst: { line: number; message: string } | undefined;
      for (const kind of VALUE_CLASSES) {
        const line = found.firstLineOfClass.get(kind);
        if (line !== undefined && !(accepted & kind) && (!worst || line < worst.line)) {
          worst = {
            line,
            message: `line ${line}: column "${target.name}" is ${target.type} but the value is ${CLASS_NAMES[kind]}`,
          };
        }
      }
      if (!worst && target.type === 'STRING' && found.maxLength > stringCapacity(target.sqlType)) {
        worst = {
          line: found.maxLengthLine,
          message: `line ${found.maxLengthLine}: column "${target.name}" holds at most ${stringCapacity(target.sqlType)} characters but the value has ${found.maxLength}`,
        };
      }
      if (worst) problems.push({ path: `line ${worst.line}`, ...worst });
    });
    if (problems.length > 0) {
      problems.sort((a, b) => a.line - b.line);
      throw new BadRequestError(
        `Values do not fit the collection's column types (appends never change types): ${problems.map((problem) => problem.message).join('; ')}.`,
        'INVALID_CSV',
        problems,
      );
    }
  }

  private indexRequests(raw: string | undefined, columns: ColumnSpec[]): IndexRequest[] {
    const requests = parseIndexes(
      raw,
      columns.map((column) => column.name),
    );
    const unindexable = requests.filter(
      (request) => !isIndexable(columns.find((column) => column.name === request.column) as ColumnSpec),
    );
    if (unindexable.length > 0) {
      throw new BadRequestError(
        `Invalid indexes: ${unindexable.map((request) => `column "${request.column}" holds long text and cannot be indexed`).join('; ')}.`,
        'INVALID_INDEXES',
        unindexable.map((request) => ({
          path: 'query.indexes',
          message: `column "${request.column}" holds text longer than 768 characters`,
        })),
      );
    }
    return requests;
  }

  /** Database failures of a load as API errors: a duplicate key is 409 naming the index and value. */
  private loadError(error: unknown, collection: string): unknown {
    const errno = mysqlErrno(error);
    if (errno === ER_DUP_ENTRY) {
      const text = error instanceof Error ? error.message : String(error);
      const match = /Duplicate entry '([\s\S]*)' for key '([^']*)'/.exec(text);
      return uniqueViolation(match?.[2] ?? '?', match?.[1] ?? '?', collection);
    }
    if (errno === ER_LOCK_WAIT_TIMEOUT) return loadConflict(collection, 'waiting for its lock timed out');
    if (errno === ER_LOCK_DEADLOCK)
      return loadConflict(collection, 'the database broke a deadlock with another request');
    // A delete of the same collection dropped its table while this load ran (found by npm run fuzz).
    if (errno === ER_NO_SUCH_TABLE) return loadConflict(collection, 'another request deleted the collection meanwhile');
    return error;
  }
}
