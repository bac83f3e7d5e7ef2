import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { OwnerNames } from '../auth/owner-ports.js';
import { LOAD_DATA_FORMAT, loadLocalInfile, localInfileEnabled } from '../db/local-infile.js';
import { ROW_ID_COLUMN, tableName } from './collection-rules.js';
import type { ColumnSpec } from './column-types.js';
import { loadDataSource } from './load-data-format.js';
import type { CellValue } from './row-encoder.js';
import { knexOf, storeTransactionOf, type StoreTransaction } from '../db/store-transaction.js';
import type { CollectionStore, EntryChange, NumberedRows } from './internal-data-store-type.js';
import { camelCased } from '../db/row-fields.js';

/** A registry entry (`internal_collections`) with its owner's username. */
export interface CollectionRecord {
  id: number;
  ownerId: number;
  owner: string;
  name: string;
  table: string;
  columns: ColumnSpec[];
  rowCount: number;
  fileName: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface IndexRecord {
  name: string;
  columns: string[];
  unique: boolean;
}

interface RegistryRow {
  id: number;
  owner_id: number;
  name: string;
  columns: string;
  row_count: number | string;
  file_name: string | null;
  created_at: Date;
  updated_at: Date;
}

interface IndexRow {
  Key_name: string;
  Column_name: string;
  Non_unique: number | string;
  Seq_in_index: number | string;
}

function toRecord(row: RegistryRow, owner: string): CollectionRecord {
  return {
    ...camelCased(row, ['id', 'owner_id', 'name', 'file_name', 'created_at', 'updated_at']),
    owner,
    table: tableName(row.id),
    columns: JSON.parse(row.columns) as ColumnSpec[],
    rowCount: Number(row.row_count),
  };
}

/** What `LOAD DATA` answered: rows sent and written, warnings (skipped or converted values), the first warnings' text. */
export interface LocalLoadResult {
  rowsSent: number;
  affectedRows: number;
  warnings: number;
  warningText: string[];
}

/**
 * Knex queries of internal data: the registry and the collection tables. Identifiers are always
 * passed as `??` bindings or built from validated names; values as `?` bindings or escaped `LOAD DATA` fields, never as SQL text.
 * Its read side is the CollectionReads contract, its writes CollectionWrites (internal-data-store-type.ts).
 */
export class InternalDataStore implements CollectionStore {
  constructor(
    readonly db: Knex,
    private readonly owners: OwnerNames,
  ) {}

  async begin(options: { readCommitted?: boolean } = {}): Promise<StoreTransaction> {
    return storeTransactionOf(
      await this.db.transaction(options.readCommitted ? { isolationLevel: 'read committed' } : undefined),
    );
  }

  async commit(trx: StoreTransaction): Promise<void> {
    await knexOf(trx).commit();
  }

  async rollback(trx: StoreTransaction): Promise<void> {
    await knexOf(trx).rollback();
  }

  private registry(db: Knex | Knex.Transaction = this.db) {
    return db('internal_collections as c').select(
      'c.id',
      'c.owner_id',
      'c.name',
      'c.columns',
      'c.row_count',
      'c.file_name',
      'c.created_at',
      'c.updated_at',
    );
  }

  /** The rows as records with their owners' usernames (auth's OwnerNames); a row whose owner is no user is left out. */
  private async withOwners(rows: RegistryRow[], trx?: Knex.Transaction): Promise<CollectionRecord[]> {
    const names = await this.owners.usernamesOf(
      rows.map((row) => row.owner_id),
      trx && storeTransactionOf(trx),
    );
    return rows.flatMap((row) => {
      const owner = names.get(row.owner_id);
      return owner === undefined ? [] : [toRecord(row, owner)];
    });
  }

  async list(ownerId: number): Promise<CollectionRecord[]> {
    const rows = (await this.registry().where('c.owner_id', ownerId).orderBy('c.name')) as RegistryRow[];
    return this.withOwners(rows);
  }

  async find(ownerId: number, name: string): Promise<CollectionRecord | undefined> {
    const row = (await this.registry().where({ 'c.owner_id': ownerId, 'c.name': name }).first()) as
      | RegistryRow
      | undefined;
    return row ? (await this.withOwners([row]))[0] : undefined;
  }

  /** The entry, locked against other loads and deletes until `trx` ends. */
  async findForUpdate(trx: StoreTransaction, ownerId: number, name: string): Promise<CollectionRecord | undefined> {
    const row = (await this.registry(knexOf(trx))
      .where({ 'c.owner_id': ownerId, 'c.name': name })
      .forUpdate()
      .first()) as RegistryRow | undefined;
    return row ? (await this.withOwners([row], knexOf(trx)))[0] : undefined;
  }

  /**
   * Reserves the name inside `trx`: the id (and so the table name) is known at once, while other
   * requests see nothing until `trx` commits; a concurrent load of the same name waits on the key.
   */
  async insertEntry(
    trx: StoreTransaction,
    entry: { ownerId: number; name: string; fileName: string },
  ): Promise<number> {
    const [id] = await knexOf(trx)('internal_collections').insert({
      owner_id: entry.ownerId,
      name: entry.name,
      columns: '[]',
      row_count: 0,
      file_name: entry.fileName,
    });
    return Number(id);
  }

  async updateEntry(trx: StoreTransaction, id: number, change: EntryChange): Promise<void> {
    await knexOf(trx)('internal_collections')
      .where({ id })
      .update({
        columns: JSON.stringify(change.columns),
        row_count: change.rowCount,
        file_name: change.fileName,
        updated_at: this.db.fn.now(3),
      });
  }

  async deleteEntry(trx: StoreTransaction, id: number): Promise<void> {
    await knexOf(trx)('internal_collections').where({ id }).delete();
  }

  /** DDL (auto-commits): the collection table with a `_row_id` primary key giving load order. */
  async createTable(table: string, columns: ColumnSpec[]): Promise<void> {
    const definitions = columns.map((column) => `?? ${column.sqlType} NULL`).join(', ');
    await this.db.raw(
      `CREATE TABLE ?? (?? BIGINT UNSIGNED NOT NULL, ${definitions}, PRIMARY KEY (??)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      [table, ROW_ID_COLUMN, ...columns.map((column) => column.name), ROW_ID_COLUMN],
    );
  }

  async dropTable(table: string): Promise<void> {
    await this.db.raw('DROP TABLE IF EXISTS ??', [table]);
  }

  /** DDL (auto-commits). A UNIQUE index on duplicated data fails with ER_DUP_ENTRY and changes nothing. */
  async addIndex(table: string, index: { name: string; column: string; unique: boolean }): Promise<void> {
    await this.db.raw(`ALTER TABLE ?? ADD ${index.unique ? 'UNIQUE ' : ''}INDEX ?? (??)`, [
      table,
      index.name,
      index.column,
    ]);
  }

  async dropIndex(table: string, name: string): Promise<void> {
    await this.db.raw('ALTER TABLE ?? DROP INDEX ??', [table, name]);
  }

  /** DDL (auto-commits): several indexes in one statement (the table is read once). A duplicate fails with ER_DUP_ENTRY naming the index, and adds none. */
  async addIndexes(
    table: string,
    indexes: ReadonlyArray<{ name: string; columns: readonly string[]; unique: boolean }>,
  ): Promise<void> {
    if (indexes.length === 0) return;
    const clauses = indexes
      .map((index) => `ADD ${index.unique ? 'UNIQUE ' : ''}INDEX ?? (${index.columns.map(() => '??').join(', ')})`)
      .join(', ');
    await this.db.raw(`ALTER TABLE ?? ${clauses}`, [
      table,
      ...indexes.flatMap((index) => [index.name, ...index.columns]),
    ]);
  }

  /**
   * Collection and staging tables older than `olderThanSeconds` that no registry row owns: what a
   * process that died in the middle of a load leaves behind (a live load's table is younger).
   */
  async orphanTables(olderThanSeconds: number): Promise<string[]> {
    const [rows] = (await this.db.raw(
      `SELECT t.table_name AS name FROM information_schema.tables t
        WHERE t.table_schema = DATABASE()
          AND (t.table_name LIKE 'idcstage\\_%' OR (t.table_name LIKE 'idc\\_%'
               AND NOT EXISTS (SELECT 1 FROM internal_collections c WHERE CONCAT('idc_', c.id) = t.table_name)))
          AND t.create_time < NOW() - INTERVAL ? SECOND`,
      [olderThanSeconds],
    )) as [Array<{ name: string }>, unknown];
    return rows.map((row) => row.name);
  }

  /** A fresh name for an append's staging table; not `idc_…`, so it is never taken for a collection table. */
  stagingTableName(collectionId: number): string {
    return `idcstage_${collectionId}_${randomBytes(6).toString('hex')}`;
  }

  /** Whether the server accepts `LOAD DATA LOCAL INFILE` (MySQL 8 turns `local_infile` off by default). */
  localInfileEnabled(): Promise<boolean> {
    return localInfileEnabled(this.db);
  }

  /**
   * `LOAD DATA LOCAL INFILE` into `table` (src/db/local-infile.ts) of the encoded `rows` numbered
   * from `firstRowId`, in the format of load-data-format.ts. An error of `rows` (a row the encoder
   * refused) ends the stream and fails the statement with that error. With LOCAL, the server does
   * not stop at a bad row: a duplicate key or a value that does not convert is skipped or changed
   * with a warning, so callers compare `rowsSent`, `affectedRows` and `warnings`.
   */
  async loadLocal({
    table,
    columns,
    firstRowId,
    rows,
  }: NumberedRows<AsyncIterable<CellValue[][]>>): Promise<LocalLoadResult> {
    const sql = this.db
      .raw(
        `LOAD DATA LOCAL INFILE 'collection-rows.tsv' INTO TABLE ?? ${LOAD_DATA_FORMAT} (${[ROW_ID_COLUMN, ...columns].map(() => '??').join(', ')})`,
        [table, ROW_ID_COLUMN, ...columns],
      )
      .toQuery();
    const source = loadDataSource(rows, firstRowId);
    try {
      const result = await loadLocalInfile(this.db, sql, () => source.readable);
      return {
        rowsSent: source.rows(),
        affectedRows: result.affectedRows,
        warnings: result.warnings,
        warningText: result.shown.map((warning) => warning.message),
      };
    } finally {
      source.readable.destroy();
    }
  }

  /**
   * A value that `staging` and `target` both hold in `columns` (one of a unique index's values the
   * append would repeat), the first in `staging`'s load order; undefined when there is none.
   */
  async firstSharedValue(staging: string, target: string, columns: readonly string[]): Promise<string | undefined> {
    const on = columns.map(() => 't.?? = s.??').join(' AND ');
    const shown =
      columns.length === 1
        ? 'CAST(s.?? AS CHAR)'
        : `CONCAT_WS('-', ${columns.map(() => 'CAST(s.?? AS CHAR)').join(', ')})`;
    const [rows] = (await this.db.raw(
      `SELECT ${shown} AS value FROM ?? AS s WHERE EXISTS (SELECT 1 FROM ?? AS t WHERE ${on}) ORDER BY s.?? LIMIT 1`,
      [...columns, staging, target, ...columns.flatMap((column) => [column, column]), ROW_ID_COLUMN],
    )) as [Array<{ value: string | Buffer | null }>, unknown];
    if (rows.length === 0) return undefined;
    const value = rows[0].value;
    return value === null ? '' : String(value);
  }

  /** Moves an append's rows from its staging table into the collection table, in load order, inside `trx`; answers the rows inserted. */
  async insertFromStaging(
    trx: StoreTransaction,
    target: string,
    staging: string,
    columns: readonly string[],
  ): Promise<number> {
    const names = [ROW_ID_COLUMN, ...columns];
    const list = names.map(() => '??').join(', ');
    const [result] = (await knexOf(trx).raw(`INSERT INTO ?? (${list}) SELECT ${list} FROM ?? ORDER BY ??`, [
      target,
      ...names,
      ...names,
      staging,
      ROW_ID_COLUMN,
    ])) as [{ affectedRows: number }, unknown];
    return Number(result.affectedRows);
  }

  /** Indexes of a collection table, the primary key excepted, columns in index order. */
  async indexes(table: string): Promise<IndexRecord[]> {
    const [rows] = (await this.db.raw('SHOW INDEX FROM ??', [table])) as [IndexRow[], unknown];
    const byName = new Map<string, IndexRecord & { seq: number[] }>();
    for (const row of rows) {
      if (row.Key_name === 'PRIMARY') continue;
      let index = byName.get(row.Key_name);
      if (!index) {
        index = { name: row.Key_name, columns: [], unique: Number(row.Non_unique) === 0, seq: [] };
        byName.set(row.Key_name, index);
      }
      index.columns.push(row.Column_name);
      index.seq.push(Number(row.Seq_in_index));
    }
    return [...byName.values()]
      .map(({ name, columns, unique, seq }) => ({
        name,
        unique,
        columns: columns
          .map((column, i) => [seq[i], column] as const)
          .sort((a, b) => a[0] - b[0])
          .map(([, column]) => column),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The highest `_row_id` (0 for an empty table): appended rows continue from here. */
  async maxRowId(trx: StoreTransaction, table: string): Promise<number> {
    const [rows] = (await knexOf(trx).raw('SELECT COALESCE(MAX(??), 0) AS max_id FROM ??', [ROW_ID_COLUMN, table])) as [
      Array<{ max_id: number | string }>,
      unknown,
    ];
    return Number(rows[0].max_id);
  }

  /**
   * One multi-row INSERT of encoded `rows` (cells in the order of `columns`) numbered from
   * `firstRowId`, inside `trx` (appends) or on its own. Every value is a bound parameter: the
   * statement's text holds only quoted identifiers and placeholders.
   */
  async insertRows(
    trx: StoreTransaction | undefined,
    { table, columns, firstRowId, rows }: NumberedRows<readonly CellValue[][]>,
  ): Promise<void> {
    if (rows.length === 0) return;
    const placeholders = `(${new Array(columns.length + 1).fill('?').join(', ')})`;
    const bindings: Array<string | number | null> = [table, ROW_ID_COLUMN, ...columns];
    rows.forEach((row, index) => {
      bindings.push(firstRowId + index);
      for (const cell of row) bindings.push(cell);
    });
    await (trx ? knexOf(trx) : this.db).raw(
      `INSERT INTO ?? (${[ROW_ID_COLUMN, ...columns].map(() => '??').join(', ')}) VALUES ${new Array(rows.length).fill(placeholders).join(', ')}`,
      bindings,
    );
  }

  /**
   * A filter value as knex binds it. An integer beyond 2^53 (a bigint, converted from validated
   * digits) is written as a numeric literal: bound as a string, MySQL would compare it with the
   * BIGINT column as a double and lose its last digits.
   */
  private filterValue(value: unknown): Knex.Value | Knex.Raw {
    return typeof value === 'bigint' ? this.db.raw(value.toString()) : (value as Knex.Value);
  }

  /** A page of rows in load order; `limit` and `offset` must be non-negative safe integers (they become SQL text). */
  async page(
    table: string,
    select: readonly string[],
    filters: ReadonlyArray<{ column: string; value: unknown }>,
    limit: number,
    offset: number,
  ): Promise<Record<string, unknown>[]> {
    // Knex writes LIMIT and OFFSET into the statement: 1e21 would print as `1e+21`, a syntax error.
    if (!Number.isSafeInteger(limit) || limit < 0 || !Number.isSafeInteger(offset) || offset < 0)
      throw new RangeError(`page bounds must be non-negative safe integers, not limit ${limit}, offset ${offset}`);
    let query = this.db(table)
      .select(...select)
      .orderBy(ROW_ID_COLUMN)
      .limit(limit)
      .offset(offset);
    for (const filter of filters)
      query =
        filter.value === null
          ? query.whereNull(filter.column)
          : query.where(filter.column, this.filterValue(filter.value));
    return (await query) as Record<string, unknown>[];
  }

  async count(table: string, filters: ReadonlyArray<{ column: string; value: unknown }>): Promise<number> {
    let query = this.db(table).count({ n: '*' });
    for (const filter of filters)
      query =
        filter.value === null
          ? query.whereNull(filter.column)
          : query.where(filter.column, this.filterValue(filter.value));
    const [row] = (await query) as Array<{ n: number | string }>;
    return Number(row.n);
  }
}
