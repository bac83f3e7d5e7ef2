import type { Knex } from 'knex';
import { snakeCased } from '../db/row-fields.js';
import type { RunMode } from '../execution/run-listener.js';

/** Runs of one scenario version and mode that ended in one second. Latencies in microseconds. */
export interface SecondCounts {
  scenarioId: number;
  /** Unix seconds. */
  second: number;
  version: string;
  mode: RunMode;
  runs: number;
  errors: number;
  latencySumUs: number;
  latencyMinUs: number;
  latencyMaxUs: number;
}

/** Runs of one scenario version and mode that ended in one minute, in one latency bucket (latency-buckets.ts). */
export interface LatencyCounts {
  scenarioId: number;
  /** Unix seconds of the minute's start. */
  minute: number;
  version: string;
  mode: RunMode;
  bucket: number;
  runs: number;
}

/** A window's totals of one version and mode: the same counts, over every second of the window. */
export type ModeTotals = Omit<SecondCounts, 'scenarioId' | 'second'>;

/** The columns of a row of run_statistics_seconds, and its primary key. */
const SECOND_FIELDS = [
  'scenarioId',
  'second',
  'version',
  'mode',
  'runs',
  'errors',
  'latencySumUs',
  'latencyMinUs',
  'latencyMaxUs',
] as const satisfies ReadonlyArray<keyof SecondCounts>;
const SECOND_KEY = ['scenarioId', 'second', 'version', 'mode'] as const;
/** The columns of a row of run_statistics_latency, and its primary key. */
const LATENCY_FIELDS = ['scenarioId', 'minute', 'version', 'mode', 'bucket', 'runs'] as const;
const LATENCY_KEY = ['scenarioId', 'minute', 'version', 'mode', 'bucket'] as const;

/** Rows per statement (a few hundred bytes each). */
const ROWS_PER_STATEMENT = 1000;
/** Rows removed per statement while pruning, so a prune never holds locks long. */
const ROWS_PER_DELETE = 10_000;

/** The two run statistics tables (migration 20261123000160_run_statistics). */
export class StatisticsStore {
  constructor(private readonly db: Knex) {}

  /**
   * Adds counts to what is stored (other processes add to the same rows), both tables in one
   * transaction: a failed write changes nothing and can be made again as a whole. Rows are written
   * in key order, so concurrent writers lock them in the same order.
   */
  async add(seconds: SecondCounts[], latencies: LatencyCounts[]): Promise<void> {
    const secondRows = inKeyOrder(seconds, SECOND_KEY).map((cell) => snakeCased(cell, SECOND_FIELDS));
    const latencyRows = inKeyOrder(latencies, LATENCY_KEY).map((cell) => snakeCased(cell, LATENCY_FIELDS));
    await this.db.transaction(async (trx) => {
      for (let start = 0; start < secondRows.length; start += ROWS_PER_STATEMENT) {
        await trx('run_statistics_seconds')
          .insert(secondRows.slice(start, start + ROWS_PER_STATEMENT))
          .onConflict()
          .merge({
            runs: trx.raw('runs + VALUES(runs)'),
            errors: trx.raw('errors + VALUES(errors)'),
            latency_sum_us: trx.raw('latency_sum_us + VALUES(latency_sum_us)'),
            latency_min_us: trx.raw('LEAST(latency_min_us, VALUES(latency_min_us))'),
            latency_max_us: trx.raw('GREATEST(latency_max_us, VALUES(latency_max_us))'),
          });
      }
      for (let start = 0; start < latencyRows.length; start += ROWS_PER_STATEMENT) {
        await trx('run_statistics_latency')
          .insert(latencyRows.slice(start, start + ROWS_PER_STATEMENT))
          .onConflict()
          .merge({ runs: trx.raw('runs + VALUES(runs)') });
      }
    });
  }

  /** Totals per version and mode of the runs that ended in [fromSecond, toSecond). */
  async totals(scenarioId: number, fromSecond: number, toSecond: number): Promise<ModeTotals[]> {
    const rows = (await this.secondsOf(scenarioId, fromSecond, toSecond)
      .groupBy('version', 'mode')
      .select('version', 'mode')
      .sum({ runs: 'runs', errors: 'errors', latency_sum_us: 'latency_sum_us' })
      .min({ latency_min_us: 'latency_min_us' })
      .max({ latency_max_us: 'latency_max_us' })) as Array<{
      version: string;
      mode: RunMode;
      runs: string;
      errors: string;
      latency_sum_us: string;
      latency_min_us: number;
      latency_max_us: number;
    }>;
    return rows.map((row) => ({
      version: row.version,
      mode: row.mode,
      runs: Number(row.runs),
      errors: Number(row.errors),
      latencySumUs: Number(row.latency_sum_us),
      latencyMinUs: Number(row.latency_min_us),
      latencyMaxUs: Number(row.latency_max_us),
    }));
  }

  /** The most runs that ended in one second of [fromSecond, toSecond), per version and over all versions. */
  async peaks(
    scenarioId: number,
    fromSecond: number,
    toSecond: number,
  ): Promise<{ byVersion: Map<string, number>; overall: number }> {
    const perVersionSecond = this.secondsOf(scenarioId, fromSecond, toSecond)
      .groupBy('version', 'second')
      .select('version')
      .sum({ runs: 'runs' });
    const perSecond = this.secondsOf(scenarioId, fromSecond, toSecond).groupBy('second').sum({ runs: 'runs' });
    const [versions, overall] = await Promise.all([
      this.db
        .from(perVersionSecond.as('per_second'))
        .groupBy('version')
        .select('version')
        .max({ peak: 'runs' }) as Promise<Array<{ version: string; peak: string }>>,
      this.db.from(perSecond.as('per_second')).max({ peak: 'runs' }).first() as Promise<
        { peak: string | null } | undefined
      >,
    ]);
    return {
      byVersion: new Map(versions.map((row) => [row.version, Number(row.peak)])),
      overall: Number(overall?.peak ?? 0),
    };
  }

  /** Runs per version and latency bucket of the minutes that overlap [fromSecond, toSecond). */
  async latencyBuckets(
    scenarioId: number,
    fromSecond: number,
    toSecond: number,
  ): Promise<Array<{ version: string; bucket: number; runs: number }>> {
    const rows = (await this.db('run_statistics_latency')
      .where('scenario_id', scenarioId)
      .where('minute', '>=', fromSecond - (fromSecond % 60))
      .where('minute', '<', toSecond)
      .groupBy('version', 'bucket')
      .select('version', 'bucket')
      .sum({ runs: 'runs' })) as Array<{ version: string; bucket: number; runs: string }>;
    return rows.map((row) => ({ version: row.version, bucket: Number(row.bucket), runs: Number(row.runs) }));
  }

  /** Deletes the rows of seconds (and minutes) before `second`; answers how many rows went. */
  async deleteBefore(second: number): Promise<number> {
    let deleted = 0;
    for (const [table, column] of [
      ['run_statistics_seconds', 'second'],
      ['run_statistics_latency', 'minute'],
    ] as const) {
      for (;;) {
        const removed = await this.db(table).where(column, '<', second).limit(ROWS_PER_DELETE).delete();
        deleted += removed;
        if (removed < ROWS_PER_DELETE) break;
      }
    }
    return deleted;
  }

  private secondsOf(scenarioId: number, fromSecond: number, toSecond: number): Knex.QueryBuilder {
    return this.db('run_statistics_seconds')
      .where('scenario_id', scenarioId)
      .where('second', '>=', fromSecond)
      .where('second', '<', toSecond);
  }
}

/** The cells ordered by `key`, field by field (numbers by value, text by code unit, as the primary keys). */
function inKeyOrder<T>(cells: readonly T[], key: readonly (keyof T)[]): T[] {
  return [...cells].sort((a, b) => {
    for (const field of key) if (a[field] !== b[field]) return a[field] < b[field] ? -1 : 1;
    return 0;
  });
}
