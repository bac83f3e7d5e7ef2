import type { RunResultRow } from './run-result-store.js';
import { rowError } from './run-result-store.js';
import type { ScoreResult } from './run-outcome.js';

/** The ScoreResult of a finished stored run (async run or batch element). */
export function storedScoreResult(row: RunResultRow): ScoreResult {
  return {
    runId: row.request_id,
    requestId: row.request_id,
    name: row.scenario_name,
    scenarioName: row.scenario_name,
    version: row.version,
    state: row.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED',
    beginTime: row.started_at ? new Date(row.started_at).toISOString() : null,
    endTime: row.finished_at ? new Date(row.finished_at).toISOString() : null,
    result: row.state === 'SUCCEEDED' && row.result ? (JSON.parse(row.result) as Record<string, unknown>) : null,
    error: rowError(row),
  };
}
