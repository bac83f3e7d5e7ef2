import { BadRequestError } from '../errors/bad-request-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { ER_NO_SUCH_TABLE, mysqlErrno } from '../db/mysql-errors.js';
import { assertCollectionName } from './collection-rules.js';
import { fromSqlRow, toColumnValue, type ColumnSpec, type CollectionColumnType } from './column-types.js';
import type { CollectionReads } from './internal-data-store-type.js';
import type { CollectionRecord, IndexRecord } from './internal-data-store.js';

export interface ColumnInfo {
  name: string;
  type: CollectionColumnType;
  nullable: boolean;
}
export type IndexInfo = IndexRecord;

export interface CollectionInfo {
  name: string;
  owner: string;
  columns: ColumnInfo[];
  rowCount: number;
  fileName: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CollectionPage {
  collection: string;
  limit: number;
  offset: number;
  total: number;
  rows: Record<string, unknown>[];
}

export interface PageRequest {
  limit?: number;
  offset?: number;
  filter?: Record<string, string>;
}

const DEFAULT_PAGE = 100;
const MAX_PAGE = 10_000;

function pageBoundError(parameter: 'limit' | 'offset', expected: string): BadRequestError {
  return new BadRequestError(`query.${parameter} must be ${expected}.`, 'VALIDATION_FAILED', [
    { path: `query.${parameter}`, message: `must be ${expected}` },
  ]);
}

/** 404 COLLECTION_NOT_FOUND: the owner has no collection of that name. */
export function collectionNotFound(collection: string): NotFoundError {
  return new NotFoundError(`No collection named "${collection}".`, 'COLLECTION_NOT_FOUND', [
    { path: 'collection_name', message: 'no such collection' },
  ]);
}

/**
 * Reads a collection's table. A delete that committed after the registry entry was read has dropped
 * the table meanwhile (found by npm run fuzz): the collection no longer exists, 404 as if it never had.
 */
async function readTable<T>(collection: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (mysqlErrno(error) === ER_NO_SUCH_TABLE) throw collectionNotFound(collection);
    throw error;
  }
}

export function toColumnInfo(column: ColumnSpec): ColumnInfo {
  return { name: column.name, type: column.type, nullable: column.nullable };
}

function toInfo(record: CollectionRecord): CollectionInfo {
  return {
    name: record.name,
    owner: record.owner,
    columns: record.columns.map(toColumnInfo),
    rowCount: record.rowCount,
    fileName: record.fileName,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/**
 * The read operations of internal data (list, one collection, its columns, indexes and rows), on the
 * store's read side only: InternalDataService answers them through this, and tests run it on the
 * in-memory CollectionReads (test/internal-data/support/), held to InternalDataStore's contract.
 */
export class CollectionReader {
  constructor(private readonly reads: CollectionReads) {}

  async list(ownerId: number): Promise<CollectionInfo[]> {
    return (await this.reads.list(ownerId)).map(toInfo);
  }

  /** The owner's collection, or 404: another user's collection does not exist for this owner. */
  async get(ownerId: number, collection: string): Promise<CollectionRecord> {
    assertCollectionName(collection);
    const record = await this.reads.find(ownerId, collection);
    if (!record) throw collectionNotFound(collection);
    return record;
  }

  async columns(ownerId: number, collection: string): Promise<ColumnInfo[]> {
    return (await this.get(ownerId, collection)).columns.map(toColumnInfo);
  }

  async indexes(ownerId: number, collection: string): Promise<IndexInfo[]> {
    const record = await this.get(ownerId, collection);
    return readTable(collection, () => this.reads.indexes(record.table));
  }

  async rows(ownerId: number, collection: string, request: PageRequest): Promise<CollectionPage> {
    const limit = request.limit ?? DEFAULT_PAGE;
    const offset = request.offset ?? 0;
    // The spec bounds both; checked again here because they are written into the statement.
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE)
      throw pageBoundError('limit', `an integer from 1 to ${MAX_PAGE}`);
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw pageBoundError('offset', `an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
    const record = await this.get(ownerId, collection);
    const filters = this.filtersOf(record, request.filter ?? {});
    const names = record.columns.map((column) => column.name);
    const [total, rows] = await readTable(collection, () =>
      Promise.all([
        filters.length > 0 ? this.reads.count(record.table, filters) : Promise.resolve(record.rowCount),
        this.reads.page(record.table, names, filters, limit, offset),
      ]),
    );
    const booleans = record.columns.filter((column) => column.type === 'BOOLEAN').map((column) => column.name);
    return { collection: record.name, limit, offset, total, rows: rows.map((row) => fromSqlRow(row, booleans)) };
  }

  /** `filter[column]=value`: the column by name (ignoring case), the value converted to its type; an empty value matches NULL. */
  private filtersOf(
    record: CollectionRecord,
    filter: Record<string, string>,
  ): Array<{ column: string; value: unknown }> {
    const problems: Array<{ path: string; message: string }> = [];
    const filters: Array<{ column: string; value: unknown }> = [];
    for (const [name, raw] of Object.entries(filter)) {
      const column = record.columns.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
      const path = `query.filter[${name}]`;
      if (!column) {
        problems.push({ path, message: `unknown column "${name}"` });
        continue;
      }
      if (typeof raw !== 'string' || raw === '') {
        filters.push({ column: column.name, value: null });
        continue;
      }
      const value = toColumnValue(raw, column.type);
      if (value === undefined) {
        problems.push({
          path,
          message: `"${raw.slice(0, 80)}" is not a valid ${column.type} for column "${column.name}"`,
        });
        continue;
      }
      filters.push({ column: column.name, value });
    }
    if (problems.length > 0)
      throw new BadRequestError(
        `Invalid filter: ${problems.map((problem) => problem.message).join('; ')}.`,
        'VALIDATION_FAILED',
        problems,
      );
    return filters;
  }
}
