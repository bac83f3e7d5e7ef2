import type { Knex } from 'knex';
import type { BulkInserter } from '../db/mariadb-bulk-insert.js';
import { insertStatement, utcDatetimeText, type SqlValue } from '../db/sql-literals.js';
import { groupsWithin } from '../db/statement-groups.js';
import type { DecisionRecord, DecisionRecordSummary, PortCapture } from './decision-record.js';
import {
  IN_TRANSACTION_STATEMENT_BYTES,
  PagesPartlyStoredError,
  RecordsStoredWithChangesError,
  type DecisionRecordStore,
  type RecordFilter,
  type RecordPage,
  type RecordPosition,
} from './decision-record-store-type.js';
import {
  PAGE_FORMAT,
  pagesOf,
  readRecord,
  recordBounds,
  recordsOnPage,
  type SealedPage,
  type StoredPage,
} from './record-page.js';
import { databaseAnswers } from '../db/database.js';
import { sendStatement } from '../db/send-statement.js';

const TABLE = 'decision_record_pages';

/** Bytes of pages per insert statement: half of MariaDB's default max_allowed_packet (16 MiB); a larger page goes alone. */
const MAX_STATEMENT_BYTES = 8 * 1024 * 1024;

/** The columns a page is written to, in the order of the bulk statement's values. */
const INSERT_COLUMNS = [
  'owner_id',
  'scenario_id',
  'scenario_name',
  'version',
  'version_id',
  'format',
  'records',
  'failed',
  'first_began_at',
  'last_began_at',
  'ids',
  'request_ids',
  'ends',
  'body',
  'bytes',
] as const;

const BULK_SQL = `INSERT INTO ${TABLE} (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})`;

/**
 * One step of `list` reads the sizes of the next 500 stored pages at most, then the records of as many
 * of them as about 4 MiB holds (at least one page: a page holds up to about 1 MiB of records, or one
 * larger record).
 */
const PAGES_PER_STEP = 500;
const BYTES_PER_STEP = 4 * 1024 * 1024;
/** Page rows (without their records) read per query when counting. */
const COUNTS_PER_READ = 500;

/**
 * How far a record's id (a time-ordered UUID, src/ids/time-ordered-id.ts) may be made before the run
 * it names began, for `get`'s first, narrow look: a sync run begins as its id is made, an async run or
 * batch element once a worker takes it. A record outside it is still found, by the wider look.
 */
const ID_BEFORE_RUN_MS = 24 * 60 * 60 * 1000;

export interface DecisionRecordStoreOptions {
  /**
   * MariaDB's bulk protocol (src/db/mariadb-bulk-insert.ts), tried first when given: the pages'
   * bytes go as they are, in binary. A server that is not MariaDB, or a DATABASE_URL with options,
   * falls through to multi-row INSERTs.
   */
  bulk?: BulkInserter;
  /**
   * Bytes of record JSON a page of `list` holds, whatever its limit (at least one record), and that
   * one call reads (RECORDS_PAGE_MAX_CHARS). Default 16 MiB.
   */
  pageMaxChars?: number;
}

const DEFAULT_PAGE_MAX_CHARS = 16 * 1024 * 1024;

interface PageRow {
  seq: number | string;
  owner_id: number;
  scenario_id: number;
  scenario_name: string;
  version: string;
  version_id: number;
  records: number;
  failed: number;
  first_began_at: Date;
  last_began_at: Date;
  ends: Buffer;
  body: Buffer;
}

const READ_COLUMNS = [
  'seq',
  'owner_id',
  'scenario_id',
  'scenario_name',
  'version',
  'version_id',
  'records',
  'failed',
  'first_began_at',
  'last_began_at',
  'ends',
  'body',
];

/** Knex queries on decision_record_pages; answers parsed records (the page format never leaves src/records). */
export class MySqlDecisionRecordStore implements DecisionRecordStore {
  private bulk?: BulkInserter;
  private readonly pageMaxChars: number;

  constructor(
    private readonly db: Knex,
    options: DecisionRecordStoreOptions = {},
  ) {
    this.bulk = options.bulk;
    this.pageMaxChars = options.pageMaxChars ?? DEFAULT_PAGE_MAX_CHARS;
  }

  databaseAnswers(): Promise<boolean> {
    return databaseAnswers(this.db);
  }

  async insertMany(records: DecisionRecord[]): Promise<void> {
    const pages = pagesOf(records);
    try {
      await this.insertPages(pages);
    } finally {
      for (const page of pages) page.release();
    }
  }

  async insertPages(pages: SealedPage[]): Promise<void> {
    if (pages.length === 0) return;
    let stored = 0;
    for (const group of groupsWithin(pages, pageBytes, MAX_STATEMENT_BYTES)) {
      try {
        await this.insertStatement(group);
      } catch (error) {
        throw stored > 0 ? new PagesPartlyStoredError(stored, error) : error;
      }
      stored += group.length;
    }
  }

  async insertPagesWithin(trx: Knex.Transaction, pages: SealedPage[]): Promise<void> {
    let stored = 0;
    for (const group of groupsWithin(pages, pageBytes, IN_TRANSACTION_STATEMENT_BYTES)) {
      try {
        // SQL literals sent as they are (ADR 0007), not knex's builder: the driver's escaper turned each page's bytes
        // into hex in JavaScript, and knex copied the statement, a few µs of a stored run's record on the worker's event loop.
        await sendStatement(trx, insertStatement(TABLE, INSERT_COLUMNS, group.map(pageValues)));
      } catch (error) {
        throw stored > 0 ? new PagesPartlyStoredError(stored, error) : error;
      }
      stored += group.length;
    }
  }

  /** One statement of pages: the bulk protocol while the server takes it, else a multi-row INSERT. */
  private async insertStatement(group: SealedPage[]): Promise<void> {
    const rows = group.map(pageValues);
    if (this.bulk) {
      const result = await this.bulk.insert(BULK_SQL, rows);
      if (result) {
        if (result.warnings > 0)
          throw new RecordsStoredWithChangesError(
            `A bulk insert stored ${group.length} pages of decision records with ${result.warnings} warning(s): a value did not fit its column`,
          );
        return;
      }
      // Not MariaDB (or options only mysql2 reads): INSERTs from now on.
      this.bulk = undefined;
    }
    await this.db(TABLE).insert(group.map(pageRow));
  }

  async list(
    scenarioId: number,
    filter: RecordFilter,
    after: RecordPosition | undefined,
    limit: number,
    options: { captures?: boolean } = {},
  ): Promise<RecordPage> {
    const records: DecisionRecordSummary[] = [];
    const captures = options.captures ? new Map<string, PortCapture[]>() : undefined;
    let answerBytes = 0;
    let readBytes = 0;
    let before = after;
    for (;;) {
      const { pages, last } = await this.pagesBefore(scenarioId, filter, before);
      if (pages.length === 0) return { records, next: null, captures };
      // The scenario's oldest page that may match was read: nothing after it.
      const lastRead = last ? pages[pages.length - 1] : undefined;
      const positionAt = (page: StoredPage, slot: number): RecordPosition | null =>
        page === lastRead && slot === 0 ? null : { page: page.seq, slot };
      for (const page of pages) {
        // A cursor is the client's to send: a slot past the page's end reads the whole page.
        const from = Math.min(before && before.page === page.seq ? before.slot - 1 : Infinity, recordsOnPage(page) - 1);
        for (let slot = from; slot >= 0; slot -= 1) {
          const record = readRecord(page, slot);
          if (!matches(record, filter)) continue;
          const [start, end] = recordBounds(page, slot);
          answerBytes += end - start;
          // Full: this record starts the next page.
          if (records.length > 0 && answerBytes > this.pageMaxChars)
            return { records, next: { page: page.seq, slot: slot + 1 }, captures };
          const { trace, captures: captured, ...summary } = record;
          records.push({ ...summary, hasTrace: trace !== null, captureCount: captured.length });
          if (captures && captured.length > 0) captures.set(record.id, captured);
          if (records.length >= limit) return { records, next: positionAt(page, slot), captures };
        }
        readBytes += page.body.length;
        before = { page: page.seq, slot: 0 };
        // A filter few records pass: the next call goes on from here.
        if (readBytes >= this.pageMaxChars) return { records, next: positionAt(page, 0), captures };
      }
    }
  }

  async count(scenarioId: number, filter: RecordFilter, max: number): Promise<number> {
    let counted = 0;
    let below: number | undefined;
    for (;;) {
      const query = this.pagesMatching(scenarioId, filter)
        .orderBy('seq', 'desc')
        .limit(COUNTS_PER_READ)
        .select('seq', 'records', 'failed', 'first_began_at', 'last_began_at');
      if (below !== undefined) query.andWhere('seq', '<', below);
      const rows = (await query) as Array<
        Pick<PageRow, 'seq' | 'records' | 'failed' | 'first_began_at' | 'last_began_at'>
      >;
      if (rows.length === 0) return Math.min(counted, max);
      for (const row of rows) {
        const known = countedFromColumns(row, filter);
        counted += known ?? (await this.countOnPage(Number(row.seq), filter));
        if (counted >= max) return max;
      }
      below = Number(rows[rows.length - 1].seq);
    }
  }

  async get(scenarioId: number, id: string): Promise<DecisionRecord | undefined> {
    const made = idTime(id);
    // A record is almost always on a page stored soon after its id was made: look there first.
    const page =
      (made !== undefined ? await this.pageHolding(scenarioId, id, new Date(made - ID_BEFORE_RUN_MS)) : undefined) ??
      (await this.pageHolding(scenarioId, id));
    if (!page) return undefined;
    for (let slot = 0; slot < recordsOnPage(page); slot += 1) {
      const record = readRecord(page, slot);
      if (record.id === id) return record;
    }
    return undefined;
  }

  async scenariosWithRecords(): Promise<number[]> {
    // A loose scan of the (scenario_id, seq) index: one step per scenario, not per page.
    const rows = (await this.db(TABLE).distinct('scenario_id')) as Array<{ scenario_id: number }>;
    return rows.map((row) => row.scenario_id);
  }

  /** Deletes whole pages whose newest record began before `cutoff`, oldest first, as many as hold at most `limit` records (at least one page); answers how many records. */
  async deleteBegunBefore(scenarioId: number, cutoff: Date, limit: number): Promise<number> {
    const rows = (await this.db(TABLE)
      .where('scenario_id', scenarioId)
      .andWhere('last_began_at', '<', cutoff)
      .orderBy('last_began_at')
      .limit(limit)
      .select('seq', 'records')) as Array<{ seq: number | string; records: number }>;
    const doomed: number[] = [];
    let records = 0;
    for (const row of rows) {
      if (doomed.length > 0 && records + row.records > limit) break;
      doomed.push(Number(row.seq));
      records += row.records;
    }
    if (doomed.length === 0) return 0;
    await this.db(TABLE).where('scenario_id', scenarioId).whereIn('seq', doomed).delete();
    return records;
  }

  /**
   * The next stored pages (with their records) newest first after `after`, of those whose columns allow
   * a match: their sizes first, then as many as BYTES_PER_STEP holds (at least one). `last`: no page
   * that may match comes after them.
   */
  private async pagesBefore(
    scenarioId: number,
    filter: RecordFilter,
    after: RecordPosition | undefined,
  ): Promise<{ pages: StoredPage[]; last: boolean }> {
    const query = this.pagesMatching(
      scenarioId,
      filter,
      filter.version === undefined ? 'decision_record_pages_scenario' : 'decision_record_pages_scenario_version',
    );
    // A page's last slot read is 0: the pages before it come next.
    if (after) query.andWhere('seq', after.slot > 0 ? '<=' : '<', after.page);
    const sizes = (await query
      .orderBy('seq', 'desc')
      .limit(PAGES_PER_STEP)
      .select('seq', this.db.raw('COALESCE(`bytes`, LENGTH(`body`)) AS size'))) as Array<{
      seq: number | string;
      size: number | string;
    }>;
    const taken: number[] = [];
    let bytes = 0;
    for (const page of sizes) {
      bytes += Number(page.size);
      if (taken.length > 0 && bytes > BYTES_PER_STEP) break;
      taken.push(Number(page.seq));
    }
    if (taken.length === 0) return { pages: [], last: true };
    // By primary key: left to itself, MariaDB reads every index entry of the scenario (`ref` on scenario_id) to find them.
    const rows = (await this.db
      .from(this.db.raw('?? FORCE INDEX (PRIMARY)', [TABLE]))
      .whereIn('seq', taken)
      .andWhere('scenario_id', scenarioId)
      .orderBy('seq', 'desc')
      .select(READ_COLUMNS)) as PageRow[];
    return { pages: rows.map(storedPage), last: sizes.length < PAGES_PER_STEP && taken.length === sizes.length };
  }

  private async countOnPage(seq: number, filter: RecordFilter): Promise<number> {
    const row = (await this.db(TABLE).where('seq', seq).first(READ_COLUMNS)) as PageRow | undefined;
    if (!row) return 0;
    const page = storedPage(row);
    let counted = 0;
    for (let slot = 0; slot < recordsOnPage(page); slot += 1) if (matches(readRecord(page, slot), filter)) counted += 1;
    return counted;
  }

  /** The newest page of the scenario (stored since `since`, when given) that lists the record id. */
  private async pageHolding(scenarioId: number, id: string, since?: Date): Promise<StoredPage | undefined> {
    const query = this.db(TABLE)
      .where('scenario_id', scenarioId)
      .andWhereRaw('INSTR(`ids`, ?) > 0', [delimited(id)]);
    if (since) query.andWhere('last_began_at', '>=', since);
    const row = (await query.orderBy('seq', 'desc').first(READ_COLUMNS)) as PageRow | undefined;
    return row ? storedPage(row) : undefined;
  }

  /**
   * The scenario's pages that may hold a record passing the filter, as far as the page's columns
   * tell: its version, its first and last start, whether it holds failed or succeeded runs, and the
   * request ids it lists. Records are then matched one by one (`matches`).
   */
  private pagesMatching(scenarioId: number, filter: RecordFilter, index?: string): Knex.QueryBuilder {
    const from: Knex.QueryBuilder =
      index === undefined ? this.db(TABLE) : this.db.from(this.db.raw('?? FORCE INDEX (??)', [TABLE, index]));
    const query = from.where('scenario_id', scenarioId);
    if (filter.version !== undefined) query.andWhere('version', filter.version);
    if (filter.state === 'FAILED') query.andWhere('failed', '>', 0);
    if (filter.state === 'SUCCEEDED') query.andWhereRaw('`failed` < `records`');
    if (filter.requestId !== undefined) query.andWhereRaw('INSTR(`request_ids`, ?) > 0', [delimited(filter.requestId)]);
    if (filter.from !== undefined) query.andWhere('last_began_at', '>=', filter.from);
    if (filter.to !== undefined) query.andWhere('first_began_at', '<', filter.to);
    return query;
  }
}

/** `\n<value>\n`: a value as the `ids` and `request_ids` columns list it, so INSTR finds only the whole value. */
function delimited(value: string): Buffer {
  return Buffer.from(`\n${value}\n`, 'utf8');
}

/**
 * How many of a page's records pass the filter when its columns tell (no request id or output to
 * compare, its records all inside the time range, all or none failed), else undefined.
 */
function countedFromColumns(
  row: Pick<PageRow, 'records' | 'failed' | 'first_began_at' | 'last_began_at'>,
  filter: RecordFilter,
): number | undefined {
  if (filter.requestId !== undefined || (filter.outputs && Object.keys(filter.outputs).length > 0)) return undefined;
  if (filter.from !== undefined && new Date(row.first_began_at) < filter.from) return undefined;
  if (filter.to !== undefined && new Date(row.last_began_at) >= filter.to) return undefined;
  if (filter.state === undefined) return row.records;
  if (row.failed !== 0 && row.failed !== row.records) return undefined;
  return filter.state === 'FAILED' ? row.failed : row.records - row.failed;
}

/** Whether a record passes every filter given. */
function matches(record: DecisionRecord, filter: RecordFilter): boolean {
  if (filter.version !== undefined && record.version !== filter.version) return false;
  if (filter.state !== undefined && record.state !== filter.state) return false;
  if (filter.requestId !== undefined && record.requestId !== filter.requestId) return false;
  if (filter.from !== undefined && record.beganAt < filter.from) return false;
  if (filter.to !== undefined && record.beganAt >= filter.to) return false;
  for (const [name, value] of Object.entries(filter.outputs ?? {})) {
    if (!outputEquals(record.result, name, value)) return false;
  }
  return true;
}

/**
 * An output compared with a query value: a string without its quotes, any other value as JSON writes
 * it, exactly. `null` also matches an output the result does not have (as in replay reports); a
 * failed run has no result, so no outputs.
 */
function outputEquals(result: Record<string, unknown> | null, name: string, value: string): boolean {
  if (result === null) return false;
  const output = Object.hasOwn(result, name) ? result[name] : undefined;
  if (output === undefined || output === null) return value === 'null';
  return (typeof output === 'string' ? output : JSON.stringify(output)) === value;
}

/** The time a time-ordered UUID (version 7) was made, else undefined. */
function idTime(id: string): number | undefined {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

function pageValues(page: SealedPage): SqlValue[] {
  const { key } = page;
  return [
    key.ownerId,
    key.scenarioId,
    key.scenarioName,
    key.version,
    key.versionId,
    PAGE_FORMAT,
    page.count,
    page.failed,
    utcDatetimeText(page.firstBeganAt),
    utcDatetimeText(page.lastBeganAt),
    page.ids,
    page.requestIds,
    page.ends,
    page.body,
    page.body.length,
  ];
}

/** A page as the columns of a knex insert. */
function pageRow(page: SealedPage): Record<string, unknown> {
  const values = pageValues(page);
  return Object.fromEntries(INSERT_COLUMNS.map((column, k) => [column, values[k]]));
}

/** About how many bytes a page adds to an insert statement (its body and ends as they are). */
export function pageBytes(page: SealedPage): number {
  return 512 + page.body.length + page.ends.length + 2 * page.ids.length + 4 * page.requestIds.length;
}

function storedPage(row: PageRow): StoredPage {
  return {
    seq: Number(row.seq),
    key: {
      ownerId: row.owner_id,
      scenarioId: row.scenario_id,
      scenarioName: row.scenario_name,
      version: row.version,
      versionId: row.version_id,
    },
    body: row.body,
    ends: row.ends,
  };
}
