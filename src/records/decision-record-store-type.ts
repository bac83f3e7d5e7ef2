import type { Knex } from 'knex';
import type { DecisionRecord } from './decision-record.js';
import type { SealedPage } from './record-page.js';
import type { RecordedRuns } from './recorded-runs.js';

export type { RecordFilter, RecordPage, RecordPosition } from './recorded-runs.js';

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
  constructor(
    readonly storedPages: number,
    override readonly cause: unknown,
  ) {
    super(
      `${storedPages} pages of decision records were stored before an insert failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

/**
 * Most bytes of pages one INSERT on a caller's transaction carries: the records' bytes go as
 * hexadecimal literals (src/db/sql-literals.ts, twice their size), and the statement must stay well below MariaDB's default
 * max_allowed_packet (16 MiB).
 */
export const IN_TRANSACTION_STATEMENT_BYTES = 4 * 1024 * 1024;

/** Where decision records are kept (src/records/decision-record-store.ts: MySQL, in pages). */
export interface DecisionRecordStore extends RecordedRuns {
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
  /** One record of the scenario; undefined when the scenario has no record of that id. */
  get(scenarioId: number, id: string): Promise<DecisionRecord | undefined>;
  /** Scenarios that have records (the retention sweeper visits each). */
  scenariosWithRecords(): Promise<number[]>;
  /** Deletes the scenario's pages whose records all began before `cutoff`, oldest first, at most `limit` records (at least one page); answers how many records. */
  deleteBegunBefore(scenarioId: number, cutoff: Date, limit: number): Promise<number>;
}
