import type { DecisionRecordSummary } from '../records/decision-record.js';
import { ReplayReportBuilder } from '../replay/replay-report-builder.js';
import type { ReplayReport } from '../replay/replay.js';
import type { ShadowRecord, StoredShadowRun } from './shadow.js';
import type { MySqlShadowStore } from './shadow-store.js';
import { FoldedReports } from './folded-reports.js';

/** Changed runs shown side by side. */
const SAMPLE_SIZE = 20;

/** What every shadow report says. */
const STANDING_NOTES = [
  'Old values are what the champion answered its callers; new values what the shadow computed on the same inputs, just after.',
  'HTTP_CALL nodes of the shadow got the champion run\u2019s own answers; no call left the service again. Lookups read the collections as they were when the shadow ran.',
  'Runs shown side by side show no inputs: the champion\u2019s decision record, under recordId (the champion run id), has them, pii inputs masked.',
];

/**
 * Comparison reports of shadows, with the replay report's machinery (ReplayReportBuilder: transition
 * matrices, numeric differences, failures per side), folded per process up to a cursor (FoldedReports):
 * a read folds only the shadow runs stored since the last one, read once `settledMs` old.
 */
export class ShadowReports extends FoldedReports<ShadowRecord, StoredShadowRun, ReplayReportBuilder, ReplayReport> {
  constructor(store: MySqlShadowStore, settledMs: number) {
    super({
      page: 1000,
      runsAfter: (shadow, afterSeq, limit) => store.runsAfter(shadow.id, afterSeq, limit, settledMs),
      start: (shadow) => new ReplayReportBuilder(shadow.outputs, SAMPLE_SIZE),
      add: (builder, run, shadow) =>
        builder.add(championRecord(shadow, run), {
          result: run.shadow.result,
          error: run.shadow.error,
          unrecorded: run.calls.unrecorded,
          served: run.calls.served,
          requestDiffers: run.calls.requestDiffers,
        }),
      build: (builder) => builder.build(STANDING_NOTES),
    });
  }
}

/** The champion's side of a pair, as the report builder reads a decision record. */
function championRecord(shadow: ShadowRecord, run: StoredShadowRun): DecisionRecordSummary {
  return {
    id: run.runId,
    ownerId: shadow.ownerId,
    scenarioId: shadow.scenarioId,
    scenarioName: '',
    version: shadow.championVersion,
    versionId: shadow.championVersionId,
    mode: 'SYNC',
    requesterId: shadow.ownerId,
    requestId: run.requestId,
    batchId: null,
    state: run.champion.error ? 'FAILED' : 'SUCCEEDED',
    inputs: {},
    maskedInputs: [],
    result: run.champion.result,
    error: run.champion.error,
    beganAt: run.beganAt,
    endedAt: run.beganAt,
    durationMicros: 0,
    hasTrace: false,
    captureCount: 0,
  };
}
