import type { DecisionRecord, DecisionRecordSummary, PortCapture, RecordState } from './decision-record.js';

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

/** A place in a scenario's newest-first order: records strictly after it come next. */
export interface RecordPosition {
  beganAt: Date;
  seq: number;
}

export interface RecordPage {
  records: DecisionRecordSummary[];
  /** Where the next page starts; null on the last page. */
  next: RecordPosition | null;
}

/**
 * The records were stored, but the database changed some of their values to make them fit (what
 * LOAD DATA LOCAL does instead of refusing a row). Nothing was lost; the message says what changed.
 */
export class RecordsStoredWithChangesError extends Error {}

/** Where decision records are kept (src/records/decision-record-store.ts: MySQL). */
export interface DecisionRecordStore {
  /**
   * Inserts records in as few statements as their size allows. A record whose id is already stored
   * is kept as it was (a job run again after a crash records its runs again). Throws
   * RecordsStoredWithChangesError when the records were stored with values the database changed.
   */
  insertMany(records: DecisionRecord[]): Promise<void>;
  /**
   * A page of a scenario's records, newest first (by began_at, then insertion order): at most `limit`,
   * and no more than the store's page size allows in characters of the records' JSON (inputs, result,
   * error and captures, which a replay reads with the page), at least one.
   */
  list(scenarioId: number, filter: RecordFilter, after: RecordPosition | undefined, limit: number): Promise<RecordPage>;
  /** How many of the scenario's records pass the filter, counting at most `max` (a replay's total). */
  count(scenarioId: number, filter: RecordFilter, max: number): Promise<number>;
  /** The captures of those of the given records (of the scenario) that have any, by record id (a replay serves HTTP calls from them). */
  capturesOf(scenarioId: number, ids: string[]): Promise<Map<string, PortCapture[]>>;
  /** One record of the scenario; undefined when the scenario has no record of that id. */
  get(scenarioId: number, id: string): Promise<DecisionRecord | undefined>;
  /** Scenarios that have records (the retention sweeper visits each). */
  scenariosWithRecords(): Promise<number[]>;
  /** Deletes at most `limit` of the scenario's records that began before `cutoff`; answers how many. */
  deleteBegunBefore(scenarioId: number, cutoff: Date, limit: number): Promise<number>;
}
