import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT, isDatabaseUnavailable, mysqlErrno } from '../db/mysql-errors.js';
import type { DecisionRecord } from './decision-record.js';
import {
  IN_TRANSACTION_STATEMENT_BYTES,
  PagesPartlyStoredError,
  type DecisionRecordStore,
} from './decision-record-store-type.js';
import type { DecisionRecorder } from './decision-recorder.js';
import { pageBytes } from './decision-record-store.js';
import { pagesOf, type SealedPage } from './record-page.js';
import type { HeldRecord, StoredRunRecords } from './run-recorder.js';

/** A stored run's record as ScenarioRunRecorder made it (masked), held until its outcome's transaction. */
export class MadeRecord implements HeldRecord {
  constructor(readonly record: DecisionRecord) {}

  get id(): string {
    return this.record.id;
  }
}

/**
 * Writes stored runs' records in the transaction of their outcomes (docs/adr/0009): a record is
 * committed exactly when its run's outcome is. Records that cannot go into the transaction (a page
 * larger than one statement may carry, or a statement the database refuses for what it holds) are
 * answered, and go to the buffered DecisionRecorder after the commit, as sync runs' records do (which
 * stores refused groups one by one and counts what it must drop).
 */
export class StoredRunRecordWriter implements StoredRunRecords {
  constructor(
    private readonly store: DecisionRecordStore,
    private readonly recorder: DecisionRecorder,
    private readonly logger: Logger,
  ) {}

  async write(trx: Knex.Transaction, held: readonly HeldRecord[]): Promise<HeldRecord[]> {
    const records = held.filter((record): record is MadeRecord => record instanceof MadeRecord);
    if (records.length === 0) return [];
    const left: MadeRecord[] = [];
    let pages: SealedPage[];
    try {
      pages = pagesOf(records.map((made) => made.record));
    } catch {
      // A value JSON cannot hold: the recorder counts it as unrecordable (recordAfterCommit).
      return records;
    }
    const fitting = pages.filter((page) => pageBytes(page) <= IN_TRANSACTION_STATEMENT_BYTES);
    if (fitting.length < pages.length) {
      const large = new Set(pages.filter((page) => !fitting.includes(page)).flatMap((page) => idsOn(page)));
      left.push(...records.filter((made) => large.has(made.id)));
    }
    try {
      await this.store.insertPagesWithin(trx, fitting);
    } catch (failure) {
      const stored = failure instanceof PagesPartlyStoredError ? failure.storedPages : 0;
      const error = failure instanceof PagesPartlyStoredError ? failure.cause : failure;
      // An outage or a lost lock fails the transaction, outcomes and records together: the job runs again.
      if (
        isDatabaseUnavailable(error) ||
        mysqlErrno(error) === ER_LOCK_DEADLOCK ||
        mysqlErrno(error) === ER_LOCK_WAIT_TIMEOUT
      )
        throw error;
      // Refused for what it holds (MySQL undid that statement only): the outcomes are stored, and these
      // records take the buffered path after the commit, which stores them one by one and counts refusals.
      const unstored = new Set(fitting.slice(stored).flatMap((page) => idsOn(page)));
      this.logger.warn(
        { err: error, records: unstored.size },
        'decision records of stored runs were refused with their outcomes: stored after the commit instead',
      );
      left.push(...records.filter((made) => unstored.has(made.id)));
    } finally {
      for (const page of pages) page.release();
    }
    return left;
  }

  recordAfterCommit(held: readonly HeldRecord[]): void {
    for (const made of held) {
      if (made instanceof MadeRecord) this.recorder.record(made.record);
    }
  }
}

/** The record ids of a sealed page. */
function idsOn(page: SealedPage): string[] {
  return page.ids.split('\n').filter((id) => id.length > 0);
}
