import type { RunError, RunOutcome } from './run-outcome.js';

/** The run_results columns that hold a finished run's outcome, and back: shared by the run and batch stores. */

export interface OutcomeColumns {
  state: 'SUCCEEDED' | 'FAILED';
  result: string | null;
  error_code: string | null;
  error_message: string | null;
  error_details: string | null;
  version: string | null;
  started_at: Date;
  finished_at: Date;
}

export function outcomeColumns(outcome: RunOutcome): OutcomeColumns {
  const { error } = outcome;
  let details: string | null = null;
  if (error) {
    const { code: _code, message: _message, ...rest } = error;
    details = Object.keys(rest).length > 0 ? JSON.stringify(rest) : null;
  }
  return {
    state: outcome.state,
    result: outcome.result ? JSON.stringify(outcome.result) : null,
    error_code: error?.code ?? null,
    error_message: error?.message ?? null,
    error_details: details,
    version: outcome.version,
    started_at: outcome.beganAt,
    finished_at: outcome.endedAt,
  };
}

/** The stored RunError of a failed row: code and message in columns, the rest (node, violations) as JSON. */
export function storedError(row: { state: string; error_code: string | null; error_message: string | null; error_details: string | null }): RunError | null {
  if (row.state !== 'FAILED') return null;
  const details = row.error_details ? (JSON.parse(row.error_details) as Record<string, unknown>) : {};
  return { ...details, code: row.error_code ?? 'INTERNAL_ERROR', message: row.error_message ?? '' };
}

export function parseObject(text: string | null): Record<string, unknown> | null {
  return text === null ? null : (JSON.parse(text) as Record<string, unknown>);
}
