import type { Logger } from 'pino';
import type { FinishedRun, RunListener, RunMode } from '../execution/run-listener.js';
import { PerVersion } from '../cache/per-version.js';
import { latencyBucket, MAX_BUCKET } from './latency-buckets.js';
import type { LatencyCounts, SecondCounts, StatisticsStore } from './statistics-store.js';

export interface RecorderSettings {
  /** How often counts are written (one transaction, a bulk upsert per table). */
  flushMs: number;
  /** Rows older than this are deleted (once an hour). */
  retentionDays: number;
  /** Most cells held in memory while writes fail; runs past it are dropped (and reported). */
  maxBufferedCells?: number;
  /** The clock (tests pin it). */
  now?: () => number;
}

/** Runs of one minute by latency bucket (index: bucket). */
interface MinuteHistogram {
  minute: number;
  buckets: number[];
}

/** Counts of one scenario version and mode not written yet. */
interface Series extends Pick<SecondCounts, 'scenarioId' | 'version' | 'mode'> {
  seconds: Map<number, SecondCounts>;
  minutes: Map<number, MinuteHistogram>;
  /** The cells of the last second and minute counted: consecutive runs mostly end in the same ones. */
  currentSecond?: SecondCounts;
  currentMinute?: MinuteHistogram;
}

const LATENCY_BUCKETS = MAX_BUCKET + 1;
const PRUNE_EVERY_MS = 3_600_000;
const DEFAULT_MAX_BUFFERED_CELLS = 200_000;

/**
 * Counts every run of a deployed version (sync, async, batch; not debug runs or test cases) for the
 * run statistics, on the hot path: a run costs a few field updates in memory. Every `flushMs` the
 * counts are added to MySQL in one transaction (StatisticsStore.add), so several processes' counts
 * add up. When the write fails the counts stay in memory and go with the next write; past
 * `maxBufferedCells` new runs are dropped and reported to `onDropped` (metrics).
 */
export class RunStatisticsRecorder implements RunListener {
  private readonly byVersion = new PerVersion<FinishedRun['scenario'], Record<RunMode, Series>>((scenario) => ({
    sync: this.seriesByKey(scenario.scenarioId, scenario.version, 'sync'),
    async: this.seriesByKey(scenario.scenarioId, scenario.version, 'async'),
    batch: this.seriesByKey(scenario.scenarioId, scenario.version, 'batch'),
  }));
  /**
   * Every series ever counted, by scenario, version and mode. Never pruned, because version objects in
   * byVersion point at them: three small objects per version that ever ran in this process.
   */
  private readonly series = new Map<string, Series>();
  private bufferedCells = 0;
  private timer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private readonly now: () => number;
  private readonly maxBufferedCells: number;

  constructor(
    private readonly store: StatisticsStore,
    private readonly settings: RecorderSettings,
    private readonly logger: Logger,
    private readonly onDropped: (runs: number) => void = () => undefined,
  ) {
    this.now = settings.now ?? Date.now;
    this.maxBufferedCells = settings.maxBufferedCells ?? DEFAULT_MAX_BUFFERED_CELLS;
  }

  runFinished(run: FinishedRun): void {
    if (this.bufferedCells >= this.maxBufferedCells) {
      this.onDropped(1);
      return;
    }
    const series = this.byVersion.of(run.scenario)[run.mode];
    const second = Math.floor(this.now() / 1000);
    const micros = Math.round(run.durationMs * 1000);
    let cell = series.currentSecond;
    if (cell?.second !== second) {
      cell = this.secondOf(series, second, micros);
      series.currentSecond = cell;
    }
    cell.runs += 1;
    if (run.errorCode !== null) cell.errors += 1;
    cell.latencySumUs += micros;
    if (micros < cell.latencyMinUs) cell.latencyMinUs = micros;
    if (micros > cell.latencyMaxUs) cell.latencyMaxUs = micros;
    const minute = second - (second % 60);
    let histogram = series.currentMinute;
    if (histogram?.minute !== minute) {
      histogram = this.minuteOf(series, minute);
      series.currentMinute = histogram;
    }
    const bucket = latencyBucket(micros);
    if (histogram.buckets[bucket] === 0) this.bufferedCells += 1;
    histogram.buckets[bucket] += 1;
  }

  /** Starts writing every `flushMs`, and pruning old rows every hour. */
  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.settings.flushMs);
    this.timer.unref();
    this.pruneTimer ??= setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  /** Stops the timers and writes what is left (best effort: a failure is logged). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    this.timer = undefined;
    this.pruneTimer = undefined;
    await this.flush();
  }

  /** Writes what was counted since the last write (waits for a write in progress first). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.write().finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async write(): Promise<void> {
    const { seconds, latencies } = this.drain();
    if (seconds.length === 0 && latencies.length === 0) return;
    try {
      await this.store.add(seconds, latencies);
    } catch (error) {
      this.restore(seconds, latencies);
      this.logger.warn(
        { err: error, cells: this.bufferedCells },
        'run statistics could not be written; they are kept and written with the next flush',
      );
    }
  }

  private secondOf(series: Series, second: number, micros: number): SecondCounts {
    let cell = series.seconds.get(second);
    if (!cell) {
      cell = {
        scenarioId: series.scenarioId,
        second,
        version: series.version,
        mode: series.mode,
        runs: 0,
        errors: 0,
        latencySumUs: 0,
        latencyMinUs: micros,
        latencyMaxUs: micros,
      };
      series.seconds.set(second, cell);
      this.bufferedCells += 1;
    }
    return cell;
  }

  private minuteOf(series: Series, minute: number): MinuteHistogram {
    let histogram = series.minutes.get(minute);
    if (!histogram) {
      histogram = { minute, buckets: new Array<number>(LATENCY_BUCKETS).fill(0) };
      series.minutes.set(minute, histogram);
    }
    return histogram;
  }

  private drain(): { seconds: SecondCounts[]; latencies: LatencyCounts[] } {
    const seconds: SecondCounts[] = [];
    const latencies: LatencyCounts[] = [];
    for (const series of this.series.values()) {
      seconds.push(...series.seconds.values());
      for (const { minute, buckets } of series.minutes.values()) {
        buckets.forEach((runs, bucket) => {
          if (runs > 0)
            latencies.push({
              scenarioId: series.scenarioId,
              minute,
              version: series.version,
              mode: series.mode,
              bucket,
              runs,
            });
        });
      }
      series.seconds = new Map();
      series.minutes = new Map();
      series.currentSecond = undefined;
      series.currentMinute = undefined;
    }
    this.bufferedCells = 0;
    return { seconds, latencies };
  }

  /** Puts counts whose write failed back, merged with what was counted meanwhile. */
  private restore(seconds: SecondCounts[], latencies: LatencyCounts[]): void {
    for (const cell of seconds) {
      const counted = this.secondOf(
        this.seriesByKey(cell.scenarioId, cell.version, cell.mode),
        cell.second,
        cell.latencyMinUs,
      );
      counted.runs += cell.runs;
      counted.errors += cell.errors;
      counted.latencySumUs += cell.latencySumUs;
      counted.latencyMinUs = Math.min(counted.latencyMinUs, cell.latencyMinUs);
      counted.latencyMaxUs = Math.max(counted.latencyMaxUs, cell.latencyMaxUs);
    }
    for (const cell of latencies) {
      const histogram = this.minuteOf(this.seriesByKey(cell.scenarioId, cell.version, cell.mode), cell.minute);
      if (histogram.buckets[cell.bucket] === 0) this.bufferedCells += 1;
      histogram.buckets[cell.bucket] += cell.runs;
    }
  }

  /** Deletes the rows older than the retention (every process does, hourly; deleting twice is harmless). */
  async prune(): Promise<void> {
    try {
      const deleted = await this.store.deleteBefore(
        Math.floor(this.now() / 1000) - this.settings.retentionDays * 86_400,
      );
      if (deleted > 0)
        this.logger.info({ deleted, retentionDays: this.settings.retentionDays }, 'pruned old run statistics');
    } catch (error) {
      this.logger.warn({ err: error }, 'old run statistics could not be pruned; tried again in an hour');
    }
  }

  private seriesByKey(scenarioId: number, version: string, mode: RunMode): Series {
    const key = `${scenarioId}\u0000${version}\u0000${mode}`;
    let series = this.series.get(key);
    if (!series) {
      series = { scenarioId, version, mode, seconds: new Map(), minutes: new Map() };
      this.series.set(key, series);
    }
    return series;
  }
}
