import { insertStatement, type SqlValue } from '../db/sql-literals.js';
import type { RunError, RunOutcome } from './run-outcome.js';
import { storedOutcomeTexts } from './stored-outcome.js';

/** What identifies a stored run's row (enough to upsert its outcome): its RUN_IDENTITY_COLUMNS. */
export interface RunIdentity {
  id: string;
  userId: number;
  requestId: string;
  scenarioName: string;
  batchId: string | null;
  elementIndex: number | null;
}

/** The run_results columns that hold a finished run's outcome, and back: shared by the run and batch stores. */

/** The run_results columns of a finished run's outcome, in the order finishedRunValues answers them (after RUN_IDENTITY_COLUMNS). */
export const OUTCOME_COLUMNS = [
  'state',
  'result',
  'error_code',
  'error_message',
  'error_details',
  'version',
  'started_at',
  'finished_at',
] as const;

/** The run_results columns that identify a stored run, in the order finishedRunValues answers them. */
const RUN_IDENTITY_COLUMNS = ['id', 'user_id', 'request_id', 'scenario_name', 'batch_id', 'element_index'] as const;

/**
 * One finished run as a row of RUN_IDENTITY_COLUMNS followed by OUTCOME_COLUMNS (the result and error
 * as JSON text), within the bounds of stored-outcome.ts.
 */
export function finishedRunValues(run: RunIdentity, outcome: RunOutcome): SqlValue[] {
  const texts = storedOutcomeTexts(outcome);
  return [
    run.id,
    run.userId,
    run.requestId,
    run.scenarioName,
    run.batchId,
    run.elementIndex,
    texts.state,
    texts.result,
    texts.errorCode,
    texts.errorMessage,
    texts.errorDetails,
    outcome.version,
    outcome.beganAt,
    outcome.endedAt,
  ];
}

/** The SQL that inserts finished runs (RUN_IDENTITY_COLUMNS + OUTCOME_COLUMNS rows), with `onDuplicate` (an ON DUPLICATE KEY clause). */
export function insertFinishedRuns(rows: SqlValue[][], onDuplicate: string): string {
  return insertStatement('run_results', [...RUN_IDENTITY_COLUMNS, ...OUTCOME_COLUMNS], rows, onDuplicate);
}

/** The stored RunError of a failed row: code and message in columns, the rest (node, violations) as JSON. */
export function storedError(row: {
  state: string;
  error_code: string | null;
  error_message: string | null;
  error_details: string | null;
}): RunError | null {
  if (row.state !== 'FAILED') return null;
  const details = row.error_details ? (JSON.parse(row.error_details) as Record<string, unknown>) : {};
  return { ...details, code: row.error_code ?? 'INTERNAL_ERROR', message: row.error_message ?? '' };
}

export function parseObject(text: string | null): Record<string, unknown> | null {
  return text === null ? null : (JSON.parse(text) as Record<string, unknown>);
}
