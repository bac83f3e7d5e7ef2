import type { FinishedRun, RunMode } from '../execution/run-listener.js';

export type RunOutcomeLabel = 'succeeded' | 'invalid_input' | 'failed';

const MODES: readonly RunMode[] = ['sync', 'async', 'batch'];
const OUTCOMES: readonly RunOutcomeLabel[] = ['succeeded', 'invalid_input', 'failed'];
const MODE_INDEX: Record<RunMode, number> = { sync: 0, async: 1, batch: 2 };

/** Label value of the series that counts runs of scenarios past the series cap. */
export const OTHER_SCENARIOS = '_other';

/** The labels of one scenario version, and its run counts by mode and outcome. */
export interface ScenarioSeries {
  owner: string;
  scenario: string;
  version: string;
  /** counts[mode * 3 + outcome], in the order of MODES and OUTCOMES. */
  counts: number[];
}

/** One value of scoring_runs_total. */
export interface RunCount {
  labels: { owner: string; scenario: string; version: string; mode: RunMode; outcome: RunOutcomeLabel };
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
 * Cardinality: at most `maxSeries` (owner, scenario, version) series; runs of further versions are
 * counted under owner, scenario and version `_other`, so a tenant deploying without end cannot grow
 * the scrape (or this process's memory) without bound.
 */
export class RunCounters {
  private readonly byVersionObject = new WeakMap<object, ScenarioSeries>();
  private readonly byLabels = new Map<string, ScenarioSeries>();
  private overflow?: ScenarioSeries;

  constructor(private readonly maxSeries: number) {}

  /** Counts the run; answers its series (for labels of rarer metrics). */
  count(run: FinishedRun): ScenarioSeries {
    const series = this.seriesOf(run.scenario);
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
          if (value > 0) yield { labels: { owner: series.owner, scenario: series.scenario, version: series.version, mode: MODES[mode], outcome: OUTCOMES[outcome] }, value };
        }
      }
    }
  }

  private seriesOf(scenario: FinishedRun['scenario']): ScenarioSeries {
    let series = this.byVersionObject.get(scenario);
    if (!series) {
      series = this.byLabelsOf(scenario.ownerName, scenario.name, scenario.version);
      this.byVersionObject.set(scenario, series);
    }
    return series;
  }

  private byLabelsOf(owner: string, scenario: string, version: string): ScenarioSeries {
    const key = `${owner}\u0000${scenario}\u0000${version}`;
    let series = this.byLabels.get(key);
    if (series) return series;
    if (this.byLabels.size >= this.maxSeries) {
      this.overflow ??= newSeries(OTHER_SCENARIOS, OTHER_SCENARIOS, OTHER_SCENARIOS);
      return this.overflow;
    }
    series = newSeries(owner, scenario, version);
    this.byLabels.set(key, series);
    return series;
  }
}

function newSeries(owner: string, scenario: string, version: string): ScenarioSeries {
  return { owner, scenario, version, counts: new Array<number>(MODES.length * OUTCOMES.length).fill(0) };
}
