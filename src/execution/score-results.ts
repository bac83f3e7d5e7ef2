import type { RunRecord } from './run-result-store.js';
import type { ScoreResult } from './run-outcome.js';

/** The ScoreResult of a finished stored run (async run or batch element). */
export function storedScoreResult(run: RunRecord): ScoreResult {
  return {
    runId: run.requestId,
    requestId: run.requestId,
    name: run.scenarioName,
    scenarioName: run.scenarioName,
    version: run.version,
    state: run.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED',
    beginTime: run.startedAt ? run.startedAt.toISOString() : null,
    endTime: run.finishedAt ? run.finishedAt.toISOString() : null,
    result: run.result,
    error: run.error,
  };
}
