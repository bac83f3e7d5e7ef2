import type { DecisionRecordSummary, PortCapture, RecordState } from './decision-record.js';

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
 * What replay reads of the decision records: a scenario's recorded runs, by page with their captures, and how
 * many match a filter. The narrow read model of recorded runs the records feature offers; DecisionRecordStore
 * is one (the composition root hands replay that store as this).
 */
export interface RecordedRuns {
  /**
   * A page of a scenario's records that pass the filter, newest first (in the order they were
   * stored): at most `limit`. It ends early, with `next`, once the records it holds reach the store's
   * page size in bytes of their JSON (at least one record), or once it has read that many bytes of
   * stored records, matching or not: a filter that few records pass reads the scenario's records in
   * bounded steps. `captures`: also answer the captures of the records listed (a replay).
   */
  list(
    scenarioId: number,
    filter: RecordFilter,
    after: RecordPosition | undefined,
    limit: number,
    options?: { captures?: boolean },
  ): Promise<RecordPage>;
  /** How many of the scenario's records pass the filter, counting at most `max` (a replay's total). */
  count(scenarioId: number, filter: RecordFilter, max: number): Promise<number>;
}
