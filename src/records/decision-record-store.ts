import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import type { TraceEntry } from '../engine/index.js';
import { escapeLoadDataValue, LOAD_DATA_FORMAT, loadLocalInfile, localInfileRefused } from '../db/local-infile.js';
import type { BulkInserter } from '../db/mariadb-bulk-insert.js';
import { ER_DUP_ENTRY } from '../db/mysql-errors.js';
import { utcDatetimeText } from '../db/sql-literals.js';
import { groupsWithin } from '../db/statement-groups.js';
import type { DecisionRecord, DecisionRecordSummary, PortCapture, RecordError, RecordMode, RecordState } from './decision-record.js';
import { RecordsStoredWithChangesError, type DecisionRecordStore, type RecordFilter, type RecordPage, type RecordPosition } from './decision-record-store-type.js';

const TABLE = 'decision_records';

/**
 * Characters of JSON per multi-row insert. Even if every character took 4 bytes in utf8mb4 a
 * statement stays at half of MariaDB's default max_allowed_packet (16 MiB).
 */
const MAX_STATEMENT_CHARS = 2 * 1024 * 1024;

interface RecordRow {
  seq: number | string;
  id: string;
  owner_id: number;
  scenario_id: number;
  scenario_name: string;
  version: string;
  version_id: number;
  mode: RecordMode;
  requester_id: number;
  request_id: string;
  batch_id: string | null;
  state: RecordState;
  inputs: string;
  masked_inputs: string | null;
  result: string | null;
  error: string | null;
  began_at: Date;
  ended_at: Date;
  duration_micros: number;
  trace?: string | null;
  captures?: string | null;
  json_chars?: number;
  has_trace?: number;
  capture_count?: number | string | null;
}

type InsertRow = Omit<RecordRow, 'seq' | 'has_trace' | 'capture_count'>;

/** Columns of a list item: the trace and captures stay in the table (lists tell only whether there are any). */
const SUMMARY_COLUMNS = [
  'seq', 'id', 'owner_id', 'scenario_id', 'scenario_name', 'version', 'version_id', 'mode', 'requester_id', 'request_id', 'batch_id',
  'state', 'inputs', 'masked_inputs', 'result', 'error', 'began_at', 'ended_at', 'duration_micros',
];

/**
 * Characters of JSON a record holds (what a page is bounded by): stored with the record, so the
 * database reads no value to tell; measured for records written before the column existed.
 */
const SIZE_OF_RECORD = 'COALESCE(`json_chars`, LENGTH(`inputs`) + COALESCE(LENGTH(`result`), 0) + COALESCE(LENGTH(`error`), 0) + COALESCE(LENGTH(`captures`), 0))';
const NEWEST_FIRST = [{ column: 'began_at', order: 'desc' }, { column: 'seq', order: 'desc' }];

/** The columns a record is written to, in the order of a LOAD DATA line. */
const INSERT_COLUMNS = [
  'id', 'owner_id', 'scenario_id', 'scenario_name', 'version', 'version_id', 'mode', 'requester_id', 'request_id', 'batch_id',
  'state', 'inputs', 'masked_inputs', 'result', 'error', 'began_at', 'ended_at', 'duration_micros', 'trace', 'captures', 'json_chars',
] as const satisfies ReadonlyArray<keyof InsertRow>;

const LOAD_SQL = `LOAD DATA LOCAL INFILE 'decision-records.tsv' INTO TABLE ${TABLE} ${LOAD_DATA_FORMAT} (${INSERT_COLUMNS.join(', ')})`;

/**
 * The bulk protocol's statement: one row of placeholders, a row of values per record. ON DUPLICATE KEY
 * UPDATE id = id: a record stored already keeps its first version (as with LOAD DATA and the INSERTs).
 */
const BULK_SQL = `INSERT INTO ${TABLE} (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')}) ON DUPLICATE KEY UPDATE id = id`;

/** Records per bulk insert: the connector sends them in packets of its own, but a group's values are held at once. */
const MAX_BULK_ROWS = 5000;

/** Bytes per chunk handed to the connection: one protocol packet each, far below max_allowed_packet. */
const LOAD_CHUNK_BYTES = 1 << 20;

export interface DecisionRecordStoreOptions {
  /**
   * MariaDB's bulk protocol (src/db/mariadb-bulk-insert.ts), tried first when given: about a quarter
   * less database CPU per record than LOAD DATA (docs/records.md). A server that is not MariaDB, or a
   * DATABASE_URL with options, falls through to the ways below.
   */
  bulk?: BulkInserter;
  /**
   * Write with `LOAD DATA LOCAL INFILE` while the server allows it (default): about half the CPU of
   * multi-row INSERTs on both sides, per record (docs/records.md). Else, or once the server refused
   * it, multi-row INSERTs.
   */
  localInfile?: boolean;
  /**
   * Most characters of JSON a page of `list` holds (inputs, result, error and captures), whatever its
   * limit, and at least one record: a run's values may be 8 Mi characters of JSON (RESULT_TOO_LARGE),
   * so a page counted in records alone could hold gigabytes. Default 16 Mi.
   */
  pageMaxChars?: number;
}

const DEFAULT_PAGE_MAX_CHARS = 16 * 1024 * 1024;

/** Knex queries on decision_records; answers parsed records (JSON columns never leave this file). */
export class MySqlDecisionRecordStore implements DecisionRecordStore {
  private loadData: boolean;
  private bulk?: BulkInserter;
  private readonly pageMaxChars: number;

  constructor(private readonly db: Knex, options: DecisionRecordStoreOptions = {}) {
    this.loadData = options.localInfile ?? true;
    this.bulk = options.bulk;
    this.pageMaxChars = options.pageMaxChars ?? DEFAULT_PAGE_MAX_CHARS;
  }

  async insertMany(records: DecisionRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.bulk) {
      if (await this.insertInBulk(records)) return;
      // Not MariaDB (or options only mysql2 reads): the other ways from now on.
      this.bulk = undefined;
    }
    if (this.loadData) {
      try {
        await this.load(records);
        return;
      } catch (error) {
        if (!localInfileRefused(error)) throw error;
        // Refused before any row was read (local_infile off on the server): INSERTs from now on.
        this.loadData = false;
      }
    }
    for (const statement of groupsWithin(records.map(toRow), rowChars, MAX_STATEMENT_CHARS)) {
      // ON DUPLICATE KEY UPDATE id = id: a record stored already keeps its first version.
      await this.db(TABLE).insert(statement).onConflict().merge({ id: this.db.raw('??', ['id']) });
    }
  }

  /**
   * One LOAD DATA of every row. With LOCAL the server skips a row whose id is stored already (a
   * record keeps its first version, as with the INSERTs) and would change a value that does not fit
   * its column with a warning. Values cannot fail to fit (ids, names and labels are bounded by the
   * spec as the columns are); should one still, RecordsStoredWithChangesError says so (it is logged).
   */
  private async load(records: DecisionRecord[]): Promise<void> {
    let text = '';
    for (const record of records) text += loadDataLine(record);
    const bytes = Buffer.from(text, 'utf8');
    const chunks = function* (): Generator<Buffer> {
      for (let offset = 0; offset < bytes.length; offset += LOAD_CHUNK_BYTES) yield bytes.subarray(offset, offset + LOAD_CHUNK_BYTES);
    };
    const result = await loadLocalInfile(this.db, LOAD_SQL, () => Readable.from(chunks()), 64);
    const unexpected = result.shown.filter((warning) => warning.code !== ER_DUP_ENTRY);
    if (unexpected.length > 0) {
      throw new RecordsStoredWithChangesError(`LOAD DATA stored ${result.affectedRows} of ${records.length} decision records with ${result.warnings} warning(s): ${unexpected.map((warning) => warning.message).slice(0, 3).join('; ')}`);
    }
  }

  /**
   * The bulk protocol. In strict mode (MariaDB's default sql_mode) a value that does not fit fails the
   * statement, and the recorder then stores the others one by one, as with the INSERTs; should a server
   * not in strict mode change the value instead, RecordsStoredWithChangesError says so. False: the
   * server cannot take bulk inserts.
   */
  private async insertInBulk(records: DecisionRecord[]): Promise<boolean> {
    for (let start = 0; start < records.length; start += MAX_BULK_ROWS) {
      const group = records.slice(start, start + MAX_BULK_ROWS);
      const result = await this.bulk!.insert(BULK_SQL, group.map(bulkRow));
      if (!result) return false;
      if (result.warnings > 0) {
        throw new RecordsStoredWithChangesError(`A bulk insert stored ${group.length} decision records with ${result.warnings} warning(s): a value did not fit its column`);
      }
    }
    return true;
  }

  /**
   * Two queries: the next `limit` + 1 positions with the size of their JSON, then the records of as
   * many of them as fit in pageMaxChars (at least one). So no page loads more than that into this
   * process, whatever its records hold; a page cut short by size has `next` like any other.
   */
  async list(scenarioId: number, filter: RecordFilter, after: RecordPosition | undefined, limit: number): Promise<RecordPage> {
    const query = this.matching(scenarioId, filter, keysetIndex(filter));
    if (after) {
      query.andWhere((older) => older.where('began_at', '<', after.beganAt).orWhere((same) => same.where('began_at', after.beganAt).andWhere('seq', '<', after.seq)));
    }
    const positions = (await query
      .orderBy(NEWEST_FIRST)
      .limit(limit + 1)
      .select(['seq', 'began_at', this.db.raw(`${SIZE_OF_RECORD} AS size_chars`)])) as Array<{ seq: number | string; began_at: Date; size_chars: number | string }>;
    let taken = 0;
    let chars = 0;
    while (taken < Math.min(limit, positions.length)) {
      chars += Number(positions[taken].size_chars);
      if (taken > 0 && chars > this.pageMaxChars) break;
      taken++;
    }
    if (taken === 0) return { records: [], next: null };
    const rows = (await this.db(TABLE)
      .where('scenario_id', scenarioId)
      .whereIn('seq', positions.slice(0, taken).map((position) => position.seq))
      .orderBy(NEWEST_FIRST)
      .select([...SUMMARY_COLUMNS, this.db.raw('`trace` IS NOT NULL AS has_trace'), this.db.raw('COALESCE(JSON_LENGTH(`captures`), 0) AS capture_count')])) as RecordRow[];
    const last = positions[taken - 1];
    return {
      records: rows.map(toSummary),
      next: positions.length > taken ? { beganAt: new Date(last.began_at), seq: Number(last.seq) } : null,
    };
  }

  async count(scenarioId: number, filter: RecordFilter, max: number): Promise<number> {
    // Counting stops at `max` rows: a bounded subquery, not a count of everything that matches.
    const matching = this.matching(scenarioId, filter).limit(max).select(this.db.raw('1'));
    const row = (await this.db.from(matching.as('m')).count({ n: '*' }).first()) as { n: number | string };
    return Number(row.n);
  }

  async capturesOf(scenarioId: number, ids: string[]): Promise<Map<string, PortCapture[]>> {
    const found = new Map<string, PortCapture[]>();
    if (ids.length === 0) return found;
    const rows = (await this.db(TABLE).where('scenario_id', scenarioId).whereIn('id', ids).whereNotNull('captures').select('id', 'captures')) as Array<Pick<RecordRow, 'id' | 'captures'>>;
    for (const row of rows) found.set(row.id, parse<PortCapture[]>(row.captures) ?? []);
    return found;
  }

  async get(scenarioId: number, id: string): Promise<DecisionRecord | undefined> {
    const row = (await this.db(TABLE).where({ id, scenario_id: scenarioId }).first()) as RecordRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** The scenario's records that pass every filter given (list and count share it, so they never disagree), read through `index` when given. */
  private matching(scenarioId: number, filter: RecordFilter, index?: string): Knex.QueryBuilder {
    const from: Knex.QueryBuilder = index === undefined ? this.db(TABLE) : this.db.from(this.db.raw('?? FORCE INDEX (??)', [TABLE, index]));
    const query = from.where('scenario_id', scenarioId);
    if (filter.version !== undefined) query.andWhere('version', filter.version);
    if (filter.state !== undefined) query.andWhere('state', filter.state);
    if (filter.requestId !== undefined) query.andWhere('request_id', filter.requestId);
    if (filter.from !== undefined) query.andWhere('began_at', '>=', filter.from);
    if (filter.to !== undefined) query.andWhere('began_at', '<', filter.to);
    for (const [name, value] of Object.entries(filter.outputs ?? {})) {
      // Not indexed: scans the scenario's records that the other filters (and the time range) leave. Exact (binary) comparison.
      if (value === 'null') {
        // As in replay reports, an output a result does not have is null (a failed run has no result, so no outputs).
        query.andWhereRaw('(JSON_UNQUOTE(JSON_EXTRACT(`result`, ?)) COLLATE utf8mb4_bin = ? OR (`result` IS NOT NULL AND JSON_EXTRACT(`result`, ?) IS NULL))', [outputPath(name), value, outputPath(name)]);
      } else {
        query.andWhereRaw('JSON_UNQUOTE(JSON_EXTRACT(`result`, ?)) COLLATE utf8mb4_bin = ?', [outputPath(name), value]);
      }
    }
    return query;
  }

  async scenariosWithRecords(): Promise<number[]> {
    // A loose scan of the (scenario_id, began_at) index: one step per scenario, not per record.
    const rows = (await this.db(TABLE).distinct('scenario_id')) as Array<{ scenario_id: number }>;
    return rows.map((row) => row.scenario_id);
  }

  async deleteBegunBefore(scenarioId: number, cutoff: Date, limit: number): Promise<number> {
    return this.db(TABLE).where('scenario_id', scenarioId).andWhere('began_at', '<', cutoff).orderBy('began_at').limit(limit).delete();
  }
}

/**
 * The index a page of `list` is read through. Left to itself, MariaDB 10.11 answers the keyset
 * condition with a `ref` on scenario_id alone and walks back from the scenario's newest record to the
 * page: every page costs as much as all the records before it (measured: 150–900 ms for a page 50,000
 * records deep, and a 100,000-record replay spending minutes in reads). Forced, the index whose
 * (…, began_at, seq) order is the list's gives a range of exactly one page (2 ms). A request id
 * selects a handful of records: its own index needs no help.
 */
function keysetIndex(filter: RecordFilter): string | undefined {
  if (filter.requestId !== undefined) return undefined;
  if (filter.version !== undefined) return 'decision_records_scenario_version_time';
  if (filter.state !== undefined) return 'decision_records_scenario_state_time';
  return 'decision_records_scenario_time';
}

/** `$."name"`: names are identifiers (the spec's pattern), so no escaping is needed inside the quotes. */
function outputPath(name: string): string {
  return `$."${name}"`;
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

function toRow(record: DecisionRecord): InsertRow {
  const { inputs, result, error, captures, chars } = pageJson(record);
  return {
    id: record.id,
    owner_id: record.ownerId,
    scenario_id: record.scenarioId,
    scenario_name: record.scenarioName,
    version: record.version,
    version_id: record.versionId,
    mode: record.mode,
    requester_id: record.requesterId,
    request_id: record.requestId,
    batch_id: record.batchId,
    state: record.state,
    inputs,
    masked_inputs: record.maskedInputs.length > 0 ? JSON.stringify(record.maskedInputs) : null,
    result,
    error,
    began_at: record.beganAt,
    ended_at: record.endedAt,
    duration_micros: record.durationMicros,
    trace: json(record.trace),
    captures,
    json_chars: chars,
  };
}

/** The JSON texts a page of records carries, and their characters in all (json_chars; SIZE_OF_RECORD reads it). */
function pageJson(record: DecisionRecord): { inputs: string; result: string | null; error: string | null; captures: string | null; chars: number } {
  const inputs = JSON.stringify(record.inputs);
  const result = json(record.result);
  const error = json(record.error);
  const captures = record.captures.length > 0 ? JSON.stringify(record.captures) : null;
  return { inputs, result, error, captures, chars: inputs.length + (result?.length ?? 0) + (error?.length ?? 0) + (captures?.length ?? 0) };
}

/**
 * A record as a line of LOAD_DATA_FORMAT, its fields in INSERT_COLUMNS order. Written straight from
 * the record (no row object between): this runs once per recorded run in the API process.
 */
function loadDataLine(record: DecisionRecord): string {
  const { maskedInputs } = record;
  const { inputs, result, error, captures, chars } = pageJson(record);
  return `${escapeLoadDataValue(record.id)}\t${record.ownerId}\t${record.scenarioId}\t${escapeLoadDataValue(record.scenarioName)}\t`
    + `${escapeLoadDataValue(record.version)}\t${record.versionId}\t${record.mode}\t${record.requesterId}\t${escapeLoadDataValue(record.requestId)}\t`
    + `${record.batchId === null ? NULL_FIELD : escapeLoadDataValue(record.batchId)}\t${record.state}\t`
    + `${jsonText(inputs)}\t${maskedInputs.length > 0 ? jsonField(maskedInputs) : NULL_FIELD}\t${jsonText(result)}\t${jsonText(error)}\t`
    + `${utcDatetimeText(record.beganAt)}\t${utcDatetimeText(record.endedAt)}\t${record.durationMicros}\t`
    + `${jsonField(record.trace)}\t${jsonText(captures)}\t${chars}\n`;
}

const NULL_FIELD = '\\N';

/**
 * A record as the bulk statement's values, in INSERT_COLUMNS order: its INSERT row (the same JSON
 * columns), times as UTC text (the connector would write a Date in its own time zone). Strings are
 * sent as they are: nothing to escape.
 */
function bulkRow(record: DecisionRecord): unknown[] {
  const row = toRow(record);
  return INSERT_COLUMNS.map((column) => {
    const value = row[column];
    return value instanceof Date ? utcDatetimeText(value) : value;
  });
}

/** A value as a JSON column's LOAD DATA field. */
function jsonField(value: unknown): string {
  return jsonText(json(value));
}

/** A JSON text (null: NULL) as a LOAD DATA field: JSON text holds no raw tab, line break or NUL (JSON.stringify escapes them), only backslashes to escape. */
function jsonText(text: string | null): string {
  if (text === null) return NULL_FIELD;
  return text.includes('\\') ? text.replaceAll('\\', '\\\\') : text;
}

function rowChars(row: InsertRow): number {
  return 512 + row.inputs.length + (row.result?.length ?? 0) + (row.error?.length ?? 0) + (row.trace?.length ?? 0) + (row.captures?.length ?? 0);
}

function parse<T>(text: string | null | undefined): T | null {
  return text === null || text === undefined ? null : (JSON.parse(text) as T);
}

function toCommon(row: RecordRow): Omit<DecisionRecord, 'trace' | 'captures'> {
  return {
    id: row.id,
    ownerId: row.owner_id,
    scenarioId: row.scenario_id,
    scenarioName: row.scenario_name,
    version: row.version,
    versionId: row.version_id,
    mode: row.mode,
    requesterId: row.requester_id,
    requestId: row.request_id,
    batchId: row.batch_id,
    state: row.state,
    inputs: parse<Record<string, unknown>>(row.inputs) ?? {},
    maskedInputs: parse<string[]>(row.masked_inputs) ?? [],
    result: parse<Record<string, unknown>>(row.result),
    error: parse<RecordError>(row.error),
    beganAt: new Date(row.began_at),
    endedAt: new Date(row.ended_at),
    durationMicros: row.duration_micros,
  };
}

function toSummary(row: RecordRow): DecisionRecordSummary {
  return { ...toCommon(row), hasTrace: Boolean(row.has_trace), captureCount: Number(row.capture_count ?? 0) };
}

function toRecord(row: RecordRow): DecisionRecord {
  return { ...toCommon(row), trace: parse<TraceEntry[]>(row.trace), captures: parse<PortCapture[]>(row.captures) ?? [] };
}
