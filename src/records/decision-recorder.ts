import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/mysql-errors.js';
import { GroupCommit } from '../execution/group-commit.js';
import type { DecisionRecord } from './decision-record.js';
import { RecordsStoredWithChangesError, type DecisionRecordStore } from './decision-record-store-type.js';

/**
 * Why records were dropped: the buffer was full; the database was unreachable; it refused the record
 * (e.g. larger than max_allowed_packet); the process stopped before it could store it; the record could
 * not be made from the run at all (a fault of this service: logged with its cause).
 */
export type DropReason = 'buffer_full' | 'store_unavailable' | 'store_refused' | 'shutdown' | 'unrecordable';

export interface DecisionRecorderOptions {
  /** Most records per insert. */
  batchSize: number;
  /** Under load, inserts start at most this often (an idle recorder inserts at once). */
  flushIntervalMs: number;
  /** Most records held (waiting or being inserted); past it new records are dropped. */
  maxBuffered: number;
  /** Told of every drop, with how many records and why (the metrics counter). */
  onDropped?: (count: number, reason: DropReason) => void;
}

/** Buffer-full and shutdown drops are logged at most this often (with the counts since the last line). */
const DROP_LOG_EVERY_MS = 10_000;
/** Inserts in flight at once: a slow insert delays its group, not the next one. */
export const INSERTS_IN_FLIGHT = 2;
/** How long `close` waits for buffered records. */
const CLOSE_TIMEOUT_MS = 10_000;

/**
 * Writes decision records behind the hot path: `record` only queues (no I/O, never throws, never
 * waits), and records are inserted in bulk by group commit (src/execution/group-commit.ts): an idle
 * recorder inserts at once, under load one insert of up to `batchSize` records starts at most every
 * `flushIntervalMs`. The buffer is bounded; a record that does not fit, or that the database does not
 * take, is dropped, counted (`onDropped`) and logged: never lost silently. `close` stores what is
 * buffered (SIGTERM).
 */
export class DecisionRecorder {
  private readonly inserts: GroupCommit<DecisionRecord, undefined>;
  private buffered = 0;
  private closing = false;
  private idle?: () => void;
  /** Drops counted but not logged yet, by reason. */
  private readonly unlogged = new Map<DropReason, number>();
  private lastCountLog = 0;
  private countLogTimer?: NodeJS.Timeout;

  constructor(private readonly records: DecisionRecordStore, private readonly options: DecisionRecorderOptions, private readonly logger: Logger) {
    this.inserts = new GroupCommit({
      maxItems: options.batchSize, concurrency: INSERTS_IN_FLIGHT, minIntervalMs: options.flushIntervalMs, commit: (records) => this.insert(records),
    });
  }

  /** Queues a record for the next insert; drops it (counted) when the buffer is full or the recorder closed. */
  record(record: DecisionRecord): void {
    if (this.closing) {
      this.dropped(1, 'shutdown');
      return;
    }
    if (this.buffered >= this.options.maxBuffered) {
      this.dropped(1, 'buffer_full');
      return;
    }
    this.buffered += 1;
    this.inserts.enqueue(record);
  }

  /** Counts (and logs) a run whose record could not be made. */
  unrecordable(error: unknown): void {
    this.dropped(1, 'unrecordable', error);
  }

  /** Records queued and not yet stored or dropped. */
  get pending(): number {
    return this.buffered;
  }

  /** Stores what is queued now, without waiting for the flush interval; resolves once every record queued so far is stored or dropped. */
  async flush(timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
    if (this.buffered === 0) return;
    this.inserts.hurry();
    await Promise.race([
      new Promise<void>((resolve) => {
        const previous = this.idle;
        this.idle = () => {
          previous?.();
          resolve();
        };
      }),
      new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
    ]);
  }

  /** Stops taking records and stores the buffered ones (at most 10 s); any left then are counted as dropped. */
  async close(): Promise<void> {
    this.closing = true;
    await this.flush();
    if (this.buffered > 0) this.dropped(this.buffered, 'shutdown');
    this.logCounts(true);
  }

  private settled(count: number): void {
    this.buffered -= count;
    if (this.buffered === 0 && this.idle) {
      const idle = this.idle;
      this.idle = undefined;
      idle();
    }
  }

  /** One group's insert, stored or dropped (counted); never throws. */
  private async insert(records: DecisionRecord[]): Promise<undefined[]> {
    try {
      await this.store(records);
    } finally {
      this.settled(records.length);
    }
    return [];
  }

  private async store(records: DecisionRecord[]): Promise<void> {
    try {
      await this.records.insertMany(records);
      return;
    } catch (error) {
      if (error instanceof RecordsStoredWithChangesError) {
        this.logger.error({ err: error, records: records.length }, 'decision records stored with values the database changed');
        return;
      }
      if (isDatabaseUnavailable(error) && records.length === 1) {
        this.dropped(1, 'store_unavailable', error);
        return;
      }
      // A lost connection is not always an outage: a record larger than max_allowed_packet makes the server
      // close it too. One by one tells the two apart, and stores the others.
      this.logger.warn({ err: error, records: records.length }, 'a bulk insert of decision records failed: storing them one by one');
    }
    await this.storeOneByOne(records);
  }

  /**
   * One bad record fails its whole statement: the others are stored one by one. A record whose insert
   * loses the connection while the next one's goes through was refused (too large); two in a row that
   * lose it mean the database is down, and the rest are dropped as such without trying each.
   */
  private async storeOneByOne(records: DecisionRecord[]): Promise<void> {
    let refused = 0;
    let lastRefusal: unknown;
    let lostJustBefore: unknown;
    for (let k = 0; k < records.length; k += 1) {
      try {
        await this.insertOne(records[k]);
      } catch (error) {
        if (!isDatabaseUnavailable(error)) {
          refused += 1;
          lastRefusal = error;
          continue;
        }
        if (lostJustBefore !== undefined) {
          // The record before and this one: the database is down (they and the rest are dropped as such).
          if (refused > 0) this.dropped(refused, 'store_refused', lastRefusal);
          this.dropped(records.length - k + 1, 'store_unavailable', error);
          return;
        }
        lostJustBefore = error;
        continue;
      }
      if (lostJustBefore !== undefined) {
        // The connection came back at once for the next record: the one before was refused.
        refused += 1;
        lastRefusal = lostJustBefore;
        lostJustBefore = undefined;
      }
    }
    if (refused > 0) this.dropped(refused, 'store_refused', lastRefusal);
    if (lostJustBefore !== undefined) this.dropped(1, 'store_unavailable', lostJustBefore);
  }

  /** One record; a lost connection is tried once more on a new one (the pool may have handed out one the last loss broke). */
  private async insertOne(record: DecisionRecord): Promise<void> {
    try {
      await this.records.insertMany([record]);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      await this.records.insertMany([record]);
    }
  }

  private dropped(count: number, reason: DropReason, error?: unknown): void {
    this.options.onDropped?.(count, reason);
    if (reason === 'buffer_full' || reason === 'shutdown') {
      // These come one record at a time: logged as counts.
      this.unlogged.set(reason, (this.unlogged.get(reason) ?? 0) + count);
      this.logCounts(false);
      return;
    }
    this.logger.error({ dropped: count, reason, err: error }, 'decision records dropped');
  }

  /** Logs the counted one-at-a-time drops: at once after a quiet spell, then at most every 10 s (`now`: at once). */
  private logCounts(now: boolean): void {
    if (this.unlogged.size === 0) return;
    const wait = this.lastCountLog + DROP_LOG_EVERY_MS - Date.now();
    if (!now && wait > 0) {
      this.countLogTimer ??= setTimeout(() => {
        this.countLogTimer = undefined;
        this.logCounts(true);
      }, wait).unref();
      return;
    }
    clearTimeout(this.countLogTimer);
    this.countLogTimer = undefined;
    for (const [reason, dropped] of this.unlogged) {
      const why = reason === 'buffer_full' ? 'the buffer is full (the database does not keep up)' : 'they came after the process began to stop';
      this.logger.error({ dropped, reason, maxBuffered: this.options.maxBuffered }, `decision records dropped: ${why}`);
    }
    this.unlogged.clear();
    this.lastCountLog = Date.now();
  }
}
