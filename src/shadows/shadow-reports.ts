import type { DecisionRecordSummary } from '../records/decision-record.js';
import { ReplayReportBuilder } from '../replay/replay-report-builder.js';
import type { ReplayReport } from '../replay/replay.js';
import type { ShadowRecord, StoredShadowRun } from './shadow.js';
import type { MySqlShadowStore } from './shadow-store.js';

/** Shadow runs read per query while folding. */
const PAGE = 1000;
/** Reports kept folded per process (least recently read go first). */
const MAX_REPORTS = 100;
/** Changed runs shown side by side. */
const SAMPLE_SIZE = 20;

/** What every shadow report says. */
const STANDING_NOTES = [
  'Old values are what the champion answered its callers; new values what the shadow computed on the same inputs, just after.',
  'HTTP_CALL nodes of the shadow got the champion run\u2019s own answers; no call left the service again. Lookups read the collections as they were when the shadow ran.',
  'Runs shown side by side show no inputs: the champion\u2019s decision record, under recordId (the champion run id), has them, pii inputs masked.',
];

interface Folded {
  builder: ReplayReportBuilder;
  /** The last shadow run folded in (shadow_runs.id). */
  cursor: number;
  /** The report as last built, until more runs are folded. */
  built?: ReplayReport;
  /** Folds of one shadow run one after another. */
  chain: Promise<unknown>;
}

/**
 * Comparison reports of shadows, with the replay report's machinery (ReplayReportBuilder: transition
 * matrices, numeric differences, failures per side). Each process keeps a report per shadow folded
 * up to a cursor: a read folds only the shadow runs stored since the last one (an index range on
 * `(shadow_id, id)`), never all of them again. Runs are read once they are `settledMs` old, so a run
 * committed late by another process is not passed over.
 */
export class ShadowReports {
  private readonly folded = new Map<string, Folded>();

  constructor(
    private readonly store: MySqlShadowStore,
    private readonly settledMs: number,
  ) {}

  report(shadow: ShadowRecord): Promise<ReplayReport> {
    let entry = this.folded.get(shadow.id);
    if (entry) this.folded.delete(shadow.id);
    else entry = { builder: new ReplayReportBuilder(shadow.outputs, SAMPLE_SIZE), cursor: 0, chain: Promise.resolve() };
    // Most recently read last: the first key is the one to drop.
    this.folded.set(shadow.id, entry);
    if (this.folded.size > MAX_REPORTS) this.folded.delete(this.folded.keys().next().value as string);
    const folded = entry;
    const next = folded.chain.catch(() => undefined).then(() => this.fold(shadow, folded));
    folded.chain = next;
    return next;
  }

  private async fold(shadow: ShadowRecord, entry: Folded): Promise<ReplayReport> {
    for (;;) {
      const runs = await this.store.runsAfter(shadow.id, entry.cursor, PAGE, this.settledMs);
      for (const run of runs)
        entry.builder.add(championRecord(shadow, run), {
          result: run.shadow.result,
          error: run.shadow.error,
          unrecorded: run.calls.unrecorded,
          served: run.calls.served,
          requestDiffers: run.calls.requestDiffers,
        });
      if (runs.length > 0) {
        entry.cursor = runs[runs.length - 1].seq;
        entry.built = undefined;
      }
      if (runs.length < PAGE) break;
    }
    entry.built ??= entry.builder.build(STANDING_NOTES);
    return entry.built;
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
