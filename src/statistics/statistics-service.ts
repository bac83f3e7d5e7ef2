import type { components } from '../../generated/api-types.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import type { RunMode } from '../execution/run-listener.js';
import type { ScenarioAccess } from '../scenarios/scenario-access.js';
import type { ScenarioActor } from '../scenarios/scenario-service.js';
import { percentileOf } from './latency-buckets.js';
import type { ModeTotals, StatisticsStore } from './statistics-store.js';

type ScenarioStatisticsDto = components['schemas']['ScenarioStatistics'];
type RunStatisticsDto = components['schemas']['RunStatistics'];

/** The window asked for, each end optional: parsed by the routes (src/http/date-time-parameter.ts: 400 outside 1970–9999). */
export interface WindowQuery {
  from?: Date;
  to?: Date;
}

/** The last whole second a window may end on: 9999-12-31T23:59:59Z (year 10000 has no RFC 3339 form). */
const LATEST_WHOLE_SECOND = Math.floor(Date.UTC(9999, 11, 31, 23, 59, 59) / 1000);

const DEFAULT_WINDOW_SECONDS = 3600;
const MAX_WINDOW_SECONDS = 31 * 86_400;

/** One version's (or all versions') sums while they are put together. */
interface Accumulated {
  count: number;
  errors: number;
  byMode: Record<RunMode, number>;
  latencySumUs: number;
  latencyMinUs: number;
  latencyMaxUs: number;
  buckets: Map<number, number>;
}

/** getScenarioStatistics: the run statistics of one scenario over a window, per version and in total. */
export class StatisticsService {
  constructor(
    private readonly scenarios: ScenarioAccess,
    private readonly store: StatisticsStore,
    private readonly now: () => number = Date.now,
  ) {}

  async forScenario(actor: ScenarioActor, id: string, query: WindowQuery): Promise<ScenarioStatisticsDto> {
    const { fromSecond, toSecond } = this.windowOf(query);
    const scenario = await this.scenarios.accessible(actor, id);
    const [totals, peaks, buckets] = await Promise.all([
      this.store.totals(scenario.id, fromSecond, toSecond),
      this.store.peaks(scenario.id, fromSecond, toSecond),
      this.store.latencyBuckets(scenario.id, fromSecond, toSecond),
    ]);
    const overall = emptyAccumulated();
    const byVersion = new Map<string, Accumulated>();
    for (const row of totals) {
      add(overall, row);
      add(versionEntry(byVersion, row.version), row);
    }
    for (const { version, bucket, runs } of buckets) {
      // Minutes at the window's edges may hold runs of versions that did not run inside it.
      const entry = byVersion.get(version);
      if (!entry) continue;
      entry.buckets.set(bucket, (entry.buckets.get(bucket) ?? 0) + runs);
      overall.buckets.set(bucket, (overall.buckets.get(bucket) ?? 0) + runs);
    }
    const versions = [...byVersion.entries()]
      .sort(([a], [b]) => Number(b) - Number(a) || (a < b ? 1 : -1))
      .map(([version, entry]) => ({ version, ...toDto(entry, peaks.byVersion.get(version) ?? 0) }));
    return {
      scenarioId: String(scenario.id),
      name: scenario.name,
      from: new Date(fromSecond * 1000).toISOString(),
      to: new Date(toSecond * 1000).toISOString(),
      total: toDto(overall, peaks.overall),
      versions,
    };
  }

  /** Whole seconds: `from` rounded down, `to` rounded up. 400 naming the parameter when the window is empty or too long. */
  private windowOf(query: WindowQuery): { fromSecond: number; toSecond: number } {
    const toMs = query.to === undefined ? this.now() : query.to.getTime();
    const fromMs = query.from === undefined ? toMs - DEFAULT_WINDOW_SECONDS * 1000 : query.from.getTime();
    const fromSecond = Math.floor(fromMs / 1000);
    const toSecond = Math.ceil(toMs / 1000);
    // Rounded up, 9999-12-31T23:59:59.5Z would end the window (and be echoed as its `to`) in year 10000.
    if (toSecond > LATEST_WHOLE_SECOND) {
      throw new BadRequestError(
        'query.to must be at most 9999-12-31T23:59:59Z: the window is counted in whole seconds, and its end rounded up would lie in year 10000.',
        'VALIDATION_FAILED',
        [{ path: 'query.to', message: 'must be at most 9999-12-31T23:59:59Z (whole seconds)' }],
      );
    }
    if (fromSecond >= toSecond) {
      throw new BadRequestError('The window is empty: `from` must be before `to`.', 'VALIDATION_FAILED', [
        { path: 'query.from', message: 'must be before `to`' },
      ]);
    }
    if (toSecond - fromSecond > MAX_WINDOW_SECONDS) {
      throw new BadRequestError('The window may be at most 31 days long.', 'VALIDATION_FAILED', [
        { path: 'query.from', message: 'must be at most 31 days before `to`' },
      ]);
    }
    return { fromSecond, toSecond };
  }
}

function emptyAccumulated(): Accumulated {
  return {
    count: 0,
    errors: 0,
    byMode: { sync: 0, async: 0, batch: 0 },
    latencySumUs: 0,
    latencyMinUs: Infinity,
    latencyMaxUs: 0,
    buckets: new Map(),
  };
}

function versionEntry(byVersion: Map<string, Accumulated>, version: string): Accumulated {
  let entry = byVersion.get(version);
  if (!entry) {
    entry = emptyAccumulated();
    byVersion.set(version, entry);
  }
  return entry;
}

function add(into: Accumulated, row: ModeTotals): void {
  into.count += row.runs;
  into.errors += row.errors;
  into.byMode[row.mode] += row.runs;
  into.latencySumUs += row.latencySumUs;
  into.latencyMinUs = Math.min(into.latencyMinUs, row.latencyMinUs);
  into.latencyMaxUs = Math.max(into.latencyMaxUs, row.latencyMaxUs);
}

/** Microseconds as milliseconds with three decimals (microsecond resolution). */
function ms(micros: number): number {
  return Math.round(micros) / 1000;
}

function toDto(entry: Accumulated, peakPerSecond: number): RunStatisticsDto {
  if (entry.count === 0) return { count: 0, errors: 0, peakPerSecond: 0, byMode: entry.byMode, latencyMs: null };
  const p95 = percentileOf(entry.buckets, 0.95) ?? entry.latencyMaxUs;
  return {
    count: entry.count,
    errors: entry.errors,
    peakPerSecond,
    byMode: entry.byMode,
    latencyMs: {
      min: ms(entry.latencyMinUs),
      avg: ms(entry.latencySumUs / entry.count),
      max: ms(entry.latencyMaxUs),
      p95: ms(Math.min(Math.max(p95, entry.latencyMinUs), entry.latencyMaxUs)),
    },
  };
}
