import { PerVersion } from '../cache/per-version.js';
import type { MeasuredMode, MeasuredRun } from './measured-run.js';

type RunOutcomeLabel = 'succeeded' | 'invalid_input' | 'failed';

const MODES: readonly MeasuredMode[] = ['sync', 'async', 'batch'];
const OUTCOMES: readonly RunOutcomeLabel[] = ['succeeded', 'invalid_input', 'failed'];
const MODE_INDEX: Record<MeasuredMode, number> = { sync: 0, async: 1, batch: 2 };

/** Label value of the series that counts runs of scenarios past the series cap. */
export const OTHER_SCENARIOS = '_other';

/** The labels of one scenario version, and its run counts by mode and outcome. */
export interface ScenarioSeries {
  owner: string;
  scenario: string;
  version: string;
  /** counts[mode * 3 + outcome], in the order of MODES and OUTCOMES. */
  counts: number[];
  /** Given up for another owner's series (see RunCounters): version objects that still point here look again. */
  evicted: boolean;
}

/** One value of scoring_runs_total. */
export interface RunCount {
  labels: { owner: string; scenario: string; version: string; mode: MeasuredMode; outcome: RunOutcomeLabel };
  value: number;
}

/** The outcome's index in OUTCOMES: succeeded, invalid_input (the caller's inputs), failed (anything else). */
function outcomeIndex(errorCode: string | null): number {
  if (errorCode === null) return 0;
  return errorCode === 'INVALID_INPUT' ? 1 : 2;
}

/**
 * The counts behind scoring_runs_total, kept in plain arrays so that a run costs an array
 * increment: the series of a deployed version is found through the version object itself (the
 * resolver hands out the same object for every run while it caches it), and only when that object
 * is new through a map keyed by its labels. prom-client reads the counts at scrape time.
 *
 * Cardinality: at most `maxSeries` (owner, scenario, version) series; runs of versions that get none are
 * counted under owner, scenario and version `_other`, so a tenant deploying without end cannot grow the
 * scrape (or this process's memory) without bound.
 *
 * Fairness: the series are shared max-min fairly among owners, not first come, first served (where the
 * first tenant to deploy 2,000 versions left every later tenant in `_other` for the life of the process).
 * At the cap, a new series of an owner holding `n` series takes the place of the oldest series of the owner
 * holding the most, if that owner holds more than `n + 1`; otherwise it is counted under `_other`. So no owner
 * holds two series more than an owner that wants more, and a series given up is never taken back by its own
 * owner at once (no churn). A given-up series leaves the scrape (Prometheus sees it end, as after a restart);
 * its version's next runs look for a series again.
 */
export class RunCounters {
  private readonly byVersion = new PerVersion<MeasuredRun['scenario'], ScenarioSeries>(
    (scenario) => this.byLabelsOf(scenario.ownerName, scenario.name, scenario.version),
    (series) => series.evicted,
  );
  private readonly byLabels = new Map<string, ScenarioSeries>();
  /** Each owner's series, oldest first. */
  private readonly byOwner = new Map<string, ScenarioSeries[]>();
  private overflow?: ScenarioSeries;

  constructor(private readonly maxSeries: number) {}

  /** Counts the run; answers its series (for labels of rarer metrics). */
  count(run: MeasuredRun): ScenarioSeries {
    const series = this.byVersion.of(run.scenario);
    series.counts[MODE_INDEX[run.mode] * OUTCOMES.length + outcomeIndex(run.errorCode)] += 1;
    return series;
  }

  /** Every non-zero count, for the scrape. */
  *values(): Generator<RunCount> {
    const all = this.overflow ? [...this.byLabels.values(), this.overflow] : this.byLabels.values();
    for (const series of all) {
      for (let mode = 0; mode < MODES.length; mode += 1) {
        for (let outcome = 0; outcome < OUTCOMES.length; outcome += 1) {
          const value = series.counts[mode * OUTCOMES.length + outcome];
          if (value > 0)
            yield {
              labels: {
                owner: series.owner,
                scenario: series.scenario,
                version: series.version,
                mode: MODES[mode],
                outcome: OUTCOMES[outcome],
              },
              value,
            };
        }
      }
    }
  }

  private byLabelsOf(owner: string, scenario: string, version: string): ScenarioSeries {
    const key = seriesKey(owner, scenario, version);
    let series = this.byLabels.get(key);
    if (series) return series;
    const own = this.byOwner.get(owner) ?? [];
    if (this.byLabels.size >= this.maxSeries && !this.evictForOwnerWith(own.length)) {
      this.overflow ??= newSeries(OTHER_SCENARIOS, OTHER_SCENARIOS, OTHER_SCENARIOS);
      return this.overflow;
    }
    series = newSeries(owner, scenario, version);
    this.byLabels.set(key, series);
    own.push(series);
    this.byOwner.set(owner, own);
    return series;
  }

  /** Gives up the oldest series of the owner holding the most, if it holds more than `held + 1`; answers whether it did. */
  private evictForOwnerWith(held: number): boolean {
    let largest: ScenarioSeries[] | undefined;
    for (const list of this.byOwner.values()) if (!largest || list.length > largest.length) largest = list;
    if (!largest || largest.length <= held + 1) return false;
    const victim = largest.shift() as ScenarioSeries;
    victim.evicted = true;
    this.byLabels.delete(seriesKey(victim.owner, victim.scenario, victim.version));
    if (largest.length === 0) this.byOwner.delete(victim.owner);
    return true;
  }
}

function seriesKey(owner: string, scenario: string, version: string): string {
  return `${owner}\u0000${scenario}\u0000${version}`;
}

function newSeries(owner: string, scenario: string, version: string): ScenarioSeries {
  return {
    owner,
    scenario,
    version,
    counts: new Array<number>(MODES.length * OUTCOMES.length).fill(0),
    evicted: false,
  };
}
