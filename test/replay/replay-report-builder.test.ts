import { describe, expect, it } from '@jest/globals';
import type { DecisionRecordSummary } from '../../src/records/decision-record.js';
import {
  REPORT_MAX_BYTES,
  ReplayReportBuilder,
  type CandidateOutcome,
} from '../../src/replay/replay-report-builder.js';
import { nearestRank } from '../../src/replay/difference-stats.js';

/** The report's aggregation on its own: bounds, comparisons and quantiles. */

let seq = 0;
function recordOf(
  result: Record<string, unknown> | null,
  extra: Partial<DecisionRecordSummary> = {},
): DecisionRecordSummary {
  seq += 1;
  return {
    id: `r${seq}`,
    ownerId: 1,
    scenarioId: 1,
    scenarioName: 's',
    version: '1',
    versionId: 1,
    mode: 'BATCH',
    requesterId: 1,
    requestId: `r${seq}`,
    batchId: null,
    state: result ? 'SUCCEEDED' : 'FAILED',
    inputs: {},
    maskedInputs: [],
    result,
    error: result ? null : { code: 'SCRIPT_ERROR', message: 'x' },
    beganAt: new Date(0),
    endedAt: new Date(0),
    durationMicros: 1,
    hasTrace: false,
    captureCount: 0,
    ...extra,
  };
}
const succeeded = (result: Record<string, unknown>): CandidateOutcome => ({
  result,
  error: null,
  unrecorded: [],
  served: 0,
  requestDiffers: 0,
});
const failed = (code: string): CandidateOutcome => ({
  result: null,
  error: { code, message: code },
  unrecorded: [],
  served: 0,
  requestDiffers: 0,
});

describe('ReplayReportBuilder', () => {
  it('compares values as JSON data: object keys in any order are equal, an absent output is null', () => {
    const builder = new ReplayReportBuilder(['limits', 'tier'], 10);
    builder.add(recordOf({ limits: { card: 1, loan: 2 }, tier: null }), succeeded({ limits: { loan: 2, card: 1 } }));
    const report = builder.build([]);
    expect(report).toMatchObject({ compared: 1, changed: 0, sample: [] });
    expect(report.outputs[0].transitions).toEqual([{ from: { card: 1, loan: 2 }, to: { card: 1, loan: 2 }, count: 1 }]);
    expect(report.outputs[1].transitions).toEqual([{ from: null, to: null, count: 1 }]);
    // tier is null in the recorded result: the output exists, so no note about its name.
    expect(report.notes.join(' ')).not.toContain('check the name');
  });

  it('keeps what it shows small: long values are shown cut and told apart by their hash, large inputs and results cut in runs side by side', () => {
    const builder = new ReplayReportBuilder(['blob'], 5);
    const big = 'x'.repeat(50_000);
    const huge = { blob: big, n: 1 };
    for (let k = 0; k < 3; k += 1)
      builder.add(recordOf(huge, { inputs: { text: big } }), succeeded({ blob: `${big}y`, n: 1 }));
    builder.add(recordOf({ blob: 'short' }), succeeded({ blob: 'short' }));
    const report = builder.build([]);
    const [blob] = report.outputs;
    expect(blob.transitions).toEqual([
      {
        from: { truncated: `"${'x'.repeat(199)}…`, chars: 50_002 },
        to: { truncated: `"${'x'.repeat(199)}…`, chars: 50_003 },
        count: 3,
      },
      { from: 'short', to: 'short', count: 1 },
    ]);
    expect(report.sample).toHaveLength(3);
    expect(report.sample[0].inputs).toEqual({ truncated: expect.stringMatching(/^\{"text":"x+…$/), chars: 50_011 });
    expect(report.sample[0].new.result).toMatchObject({ chars: 50_018 });
    expect(JSON.stringify(report).length).toBeLessThan(5_000);
  });

  it('notes an output that no result of either version has (a misspelt name compares null with null)', () => {
    const builder = new ReplayReportBuilder(['decision', 'decison', 'riskBand'], 0);
    builder.add(recordOf({ decision: 'APPROVE', riskBand: 'LOW' }), succeeded({ decision: 'REVIEW' }));
    builder.add(recordOf({ decision: 'APPROVE' }), succeeded({ decision: 'APPROVE' }));
    const report = builder.build([]);
    expect(report.outputs[1]).toMatchObject({
      name: 'decison',
      compared: 2,
      changed: 0,
      transitions: [{ from: null, to: null, count: 2 }],
    });
    expect(report.notes).toContain(
      'No result of either version has the output "decison", so it compares null with null: check the name.',
    );
  });

  it('lists the 500 most frequent pairs, tells apart at most 10,000, and counts the rest', () => {
    const builder = new ReplayReportBuilder(['score'], 0);
    for (let k = 0; k < 12_000; k += 1) builder.add(recordOf({ score: k }), succeeded({ score: k + 1 }));
    for (let k = 0; k < 3; k += 1) builder.add(recordOf({ score: 5 }), succeeded({ score: 6 }));
    const [score] = builder.build([]).outputs;
    expect(score.transitions).toHaveLength(500);
    expect(score.transitions[0]).toEqual({ from: 5, to: 6, count: 4 });
    expect(score.otherTransitions).toEqual({ pairs: 10_000 - 500, records: 12_003 - 500 - 3 });
    expect(score.differences).toMatchObject({ count: 12_003, mean: 1, p5: 1, p95: 1 });
  });

  it('keeps at most 1,000 runs that failed in one version only, and the first `sampleSize` changed records', () => {
    const builder = new ReplayReportBuilder(['x'], 3);
    for (let k = 0; k < 1001; k += 1) builder.add(recordOf({ x: 1 }), failed('TIME_LIMIT_EXCEEDED'));
    builder.add(recordOf(null), failed('SCRIPT_ERROR'));
    const report = builder.build([]);
    expect(report.failures).toMatchObject({
      onlyOld: 0,
      onlyNew: 1001,
      both: 1,
      newErrorCodes: { TIME_LIMIT_EXCEEDED: 1001, SCRIPT_ERROR: 1 },
      truncated: true,
    });
    expect(report.failures.runs).toHaveLength(1000);
    expect(report.sample.map((run) => run.recordId)).toEqual(
      report.failures.runs.slice(0, 3).map((run) => run.recordId),
    );
    expect(builder.failed).toBe(1002);
  });

  it('leaves records with unrecorded calls out of the comparison, counting each node once per record', () => {
    const builder = new ReplayReportBuilder(['x'], 3);
    const site = { nodeId: 'fraud', callPath: ['sub'] };
    builder.add(recordOf({ x: 1 }), { ...succeeded({ x: 2 }), unrecorded: [site, site] });
    const report = builder.build([]);
    expect(report).toMatchObject({
      replayed: 1,
      compared: 0,
      changed: 0,
      unrecorded: { records: 1, calls: [{ nodeId: 'fraud', callPath: ['sub'], records: 1 }] },
    });
    expect(builder.failed).toBe(1);
  });
});

describe('nearestRank', () => {
  it('is the smallest value with at least p % of the values at or below it', () => {
    const sorted = [10, 20, 30, 40];
    expect([5, 25, 26, 50, 95, 100].map((p) => nearestRank(sorted, p))).toEqual([10, 10, 20, 20, 40, 40]);
  });

  it('keeps the stored report within REPORT_MAX_BYTES whatever the records hold, saying what it left out (issue 27, problem 2)', () => {
    // 1,200 runs side by side of large inputs, results and errors made a 57 MB report that MariaDB never stored.
    const builder = new ReplayReportBuilder(['decision'], 200);
    const text = 'y'.repeat(15_000);
    const violations = Array.from({ length: 3000 }, (_, k) => ({
      variable: `unknown_${k}`,
      message: 'is not an input of this scenario',
    }));
    for (let k = 0; k < 1200; k += 1) {
      const record = recordOf({ decision: `old-${k}`, text }, { inputs: { text } });
      builder.add(
        record,
        k % 2 === 0
          ? succeeded({ decision: `new-${k}`, text })
          : {
              result: null,
              error: { code: 'INVALID_INPUT', message: 'z'.repeat(120_000), violations },
              unrecorded: [],
              served: 0,
              requestDiffers: 0,
            },
      );
    }
    const report = builder.build([]);
    expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThanOrEqual(REPORT_MAX_BYTES);
    expect(report).toMatchObject({ replayed: 1200, changed: 1200 });
    expect(report.failures.onlyNew).toBe(600);
    expect(report.failures.truncated).toBe(true);
    expect(report.notes.join(' ')).toMatch(
      /The report was cut to fit the 4194304 bytes a stored report keeps \(it took \d+\): left out \d+ sample run\(s\), \d+ failed run\(s\)/,
    );
    const shownError = report.failures.runs[0]?.new.error ?? report.sample.find((run) => run.new.error)?.new.error;
    expect(shownError).toMatchObject({ code: 'INVALID_INPUT', detailsOmitted: true });
    expect(String(shownError?.message).length).toBeLessThan(1100);
  });

  it('leaves a report within its bound as it is', () => {
    const builder = new ReplayReportBuilder(['decision'], 10);
    builder.add(recordOf({ decision: 'A' }), succeeded({ decision: 'B' }));
    const report = builder.build([], 1_000_000);
    expect(report.sample).toHaveLength(1);
    expect(report.notes.join(' ')).not.toContain('was cut');
  });
});
