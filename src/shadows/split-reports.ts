import type { components } from '../../generated/api-types.js';
import { FoldedReports } from './folded-reports.js';
import type { SplitRecord, StoredSplitRun } from './split.js';
import type { MySqlSplitStore } from './split-store.js';

type SplitReportDto = components['schemas']['SplitReport'];
type SplitArmReportDto = components['schemas']['SplitArmReport'];

/** z of a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

/** The 95 % Wilson score interval of `count` successes in `n` trials. */
export function wilson(count: number, n: number, z = Z95): { low: number; high: number } {
  if (n === 0) return { low: 0, high: 1 };
  const p = count / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  // At the edges the interval reaches 0 or 1 exactly (rounding leaves 1 - 1e-16 otherwise).
  return { low: count === 0 ? 0 : Math.max(0, centre - half), high: count === n ? 1 : Math.min(1, centre + half) };
}

interface ArmTotals {
  runs: number;
  failed: number;
  decisions: Map<string, number>;
  /** Run times in ms, kept for percentiles (8 bytes a run, as a replay's numeric differences). */
  latencies: number[];
  latencySum: number;
}

/**
 * Reports of splits per arm (counts, decision rates with Wilson intervals, latency), folded per process up
 * to a cursor as shadow reports are (FoldedReports): a read folds only the split runs stored since the last
 * one, read once `settledMs` old.
 */
export class SplitReports extends FoldedReports<SplitRecord, StoredSplitRun, Map<string, ArmTotals>, SplitReportDto> {
  constructor(store: MySqlSplitStore, settledMs: number) {
    super({
      page: 5000,
      runsAfter: (split, afterSeq, limit) => store.runsAfter(split.id, afterSeq, limit, settledMs),
      start: () => new Map(),
      add: addRun,
      build: (arms, split) => build(split, arms),
    });
  }
}

function addRun(arms: Map<string, ArmTotals>, run: StoredSplitRun): void {
  let arm = arms.get(run.arm);
  if (!arm) {
    arm = { runs: 0, failed: 0, decisions: new Map(), latencies: [], latencySum: 0 };
    arms.set(run.arm, arm);
  }
  arm.runs++;
  const ms = run.durationMicros / 1000;
  arm.latencies.push(ms);
  arm.latencySum += ms;
  if (run.failed) arm.failed++;
  else arm.decisions.set(run.decision ?? 'null', (arm.decisions.get(run.decision ?? 'null') ?? 0) + 1);
}

function build(split: SplitRecord, arms: Map<string, ArmTotals>): SplitReportDto {
  const labels = [split.championVersion, ...split.challengers.map((challenger) => challenger.version)];
  const reports: SplitArmReportDto[] = labels.map((version, index) =>
    armReport(version, index === 0, arms.get(version)),
  );
  return { runs: reports.reduce((sum, arm) => sum + arm.runs, 0), arms: reports };
}

function armReport(version: string, champion: boolean, totals: ArmTotals | undefined): SplitArmReportDto {
  if (!totals) return { version, champion, runs: 0, failed: 0, decisions: [], latencyMs: null };
  const decided = totals.runs - totals.failed;
  const decisions = [...totals.decisions]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([value, count]) => ({ value, count, rate: count / decided, ...wilson(count, decided) }));
  totals.latencies.sort((a, b) => a - b);
  return {
    version,
    champion,
    runs: totals.runs,
    failed: totals.failed,
    decisions,
    latencyMs: {
      mean: totals.latencySum / totals.runs,
      p50: percentile(totals.latencies, 0.5),
      p95: percentile(totals.latencies, 0.95),
    },
  };
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
