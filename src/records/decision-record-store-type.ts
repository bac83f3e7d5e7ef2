import type { Knex } from 'knex';
import type { DecisionRecord, DecisionRecordSummary, PortCapture, RecordState } from './decision-record.js';
import type { SealedPage } from './record-page.js';

/** Filters of a scenario's record list; every one given must hold. */
export interface RecordFilter {
  version?: string;
  state?: RecordState;
  requestId?: string;
  /** Began at or after. */
  from?: Date;
  /** Began before. */
  to?: Date;
  /**
   * Output variables that must equal a value: the output's JSON value as text (a string without its
   * quotes, a number or boolean as JSON writes it, `null`). Names are identifiers (the spec's pattern).
   */
  outputs?: Record<string, string>;
}

/**
 * A place in a scenario's newest-first order (stored pages newest first, a page's records newest
 * first): records strictly after it come next, that is the records of stored page `page` before
 * `slot`, then the pages stored before it.
 */
export interface RecordPosition {
  page: number;
  slot: number;
}

export interface RecordPage {
  records: DecisionRecordSummary[];
  /** Where the next page starts; null once every record was looked at. */
  next: RecordPosition | null;
  /** With `captures` asked for: the captures of the listed records that have any, by record id (a replay serves HTTP calls from them). */
  captures?: Map<string, PortCapture[]>;
}

/**
 * The records were stored, but the database changed some of their values to make them fit (what a
 * server outside strict mode does instead of refusing a row). Nothing was lost; the message says what changed.
 */
export class RecordsStoredWithChangesError extends Error {}

/**
 * An insert of pages in several statements failed after the first `storedPages` pages were stored:
 * `cause` is the failure. Storing the rest again must start after those.
 */
export class PagesPartlyStoredError extends Error {
  constructor(readonly storedPages: number, override readonly cause: unknown) {
    super(`${storedPages} pages of decision records were stored before an insert failed: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/**
 * Most bytes of pages one INSERT on a caller's transaction carries: knex sends the records' bytes as
 * hexadecimal literals (twice their size), and the statement must stay well below MariaDB's default
 * max_allowed_packet (16 MiB).
 */
export const IN_TRANSACTION_STATEMENT_BYTES = 4 * 1024 * 1024;

/** Where decision records are kept (src/records/decision-record-store.ts: MySQL, in pages). */
export interface DecisionRecordStore {
  /**
   * Inserts pages of records (src/records/record-page.ts) in as few statements as their size allows.
   * Throws RecordsStoredWithChangesError when they were stored with values the database changed, and
   * PagesPartlyStoredError when a statement failed after others stored pages.
   */
  insertPages(pages: SealedPage[]): Promise<void>;
  /**
   * Inserts pages with multi-row INSERTs on `trx`, a transaction of the caller (stored runs' records,
   * written with their outcomes), each statement within IN_TRANSACTION_STATEMENT_BYTES; a larger page
   * is not for a transaction (its hexadecimal text could pass max_allowed_packet, which ends the
   * connection and the transaction with it). Throws PagesPartlyStoredError as insertPages does.
   */
  insertPagesWithin(trx: Knex.Transaction, pages: SealedPage[]): Promise<void>;
  /** Inserts records as pages (pagesOf): for callers that hold records rather than pages. */
  insertMany(records: DecisionRecord[]): Promise<void>;
  /**
   * Whether MySQL answers a trivial query within a moment: after an insert lost its connection, tells an
   * outage (hold the records, try again) from a record the server refused by closing the connection
   * (larger than max_allowed_packet: it can never be stored).
   */
  databaseAnswers(): Promise<boolean>;
  /**
   * A page of a scenario's records that pass the filter, newest first (in the order they were
   * stored): at most `limit`. It ends early, with `next`, once the records it holds reach the store's
   * page size in bytes of their JSON (at least one record), or once it has read that many bytes of
   * stored records, matching or not: a filter that few records pass reads the scenario's records in
   * bounded steps. `captures`: also answer the captures of the records listed (a replay).
   */
  list(scenarioId: number, filter: RecordFilter, after: RecordPosition | undefined, limit: number, options?: { captures?: boolean }): Promise<RecordPage>;
  /** How many of the scenario's records pass the filter, counting at most `max` (a replay's total). */
  count(scenarioId: number, filter: RecordFilter, max: number): Promise<number>;
  /** One record of the scenario; undefined when the scenario has no record of that id. */
  get(scenarioId: number, id: string): Promise<DecisionRecord | undefined>;
  /** Scenarios that have records (the retention sweeper visits each). */
  scenariosWithRecords(): Promise<number[]>;
  /** Deletes the scenario's pages whose records all began before `cutoff`, oldest first, at most `limit` records (at least one page); answers how many records. */
  deleteBegunBefore(scenarioId: number, cutoff: Date, limit: number): Promise<number>;
}
