import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/mysql-errors.js';
import type { DecisionRecord } from './decision-record.js';
import {
  PagesPartlyStoredError,
  RecordsStoredWithChangesError,
  type DecisionRecordStore,
} from './decision-record-store-type.js';
import { PAGE_TARGET_BYTES, PageBuilder, recordText, sameKey, type SealedPage } from './record-page.js';

/**
 * Why records were dropped: the buffer was full (the database does not keep up, or has been unreachable
 * long enough to fill it: records are held while it is); the database refused the record (e.g. larger
 * than max_allowed_packet); the process stopped before it could store it; the record could not be made
 * from the run at all (a fault of this service: logged with its cause).
 */
export type DropReason = 'buffer_full' | 'store_refused' | 'shutdown' | 'unrecordable';

export interface DecisionRecorderOptions {
  /** Most records per page (src/records/record-page.ts); a page is also sealed at about 1 MiB. */
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
/** Inserts in flight at once: a slow insert delays its pages, not the next ones. */
export const INSERTS_IN_FLIGHT = 2;
/** How long `close` waits for buffered records. */
const CLOSE_TIMEOUT_MS = 10_000;
/** While MySQL is unreachable, held records are tried again this long after a failed try, doubling up to OUTAGE_RETRY_MAX_MS. */
const OUTAGE_RETRY_MIN_MS = 250;
const OUTAGE_RETRY_MAX_MS = 2000;

/**
 * Writes decision records behind the hot path: `record` encodes the record onto an open page of its
 * scenario version (src/records/record-page.ts) and returns (no I/O, never throws, never waits), so
 * nothing of the run outlives it but the record's text. Pages are inserted in groups: an idle
 * recorder inserts at once, under load one insert of every page filled since starts at most every
 * `flushIntervalMs`, with at most INSERTS_IN_FLIGHT in flight. The buffer is bounded; a record that
 * does not fit, or that the database refuses, is dropped, counted (`onDropped`) and logged: never lost
 * silently. While MySQL is unreachable the records are held (in the same bounded buffer) and tried again
 * until it answers: a 20 s outage dropped the records of runs that were stored or answered (issue 27,
 * problem 8). `close` stores what is buffered (SIGTERM).
 */
export class DecisionRecorder {
  /** The page being filled, per scenario version. */
  private readonly open = new Map<number, PageBuilder>();
  /** Pages filled and waiting for an insert. */
  private sealed: SealedPage[] = [];
  private inFlight = 0;
  private lastStart = -Infinity;
  private timer?: NodeJS.Timeout;
  /** Store what is held now without waiting for the interval (flush, close). */
  private hurried = false;
  private buffered = 0;
  private closing = false;
  private idle?: () => void;
  /** Drops counted but not logged yet, by reason. */
  private readonly unlogged = new Map<DropReason, number>();
  private lastCountLog = 0;
  private countLogTimer?: NodeJS.Timeout;
  /** While MySQL is unreachable: the wait before the next try, and the earliest time of it (performance.now()). */
  private outageRetryMs = 0;
  private retryNotBefore = 0;

  constructor(
    private readonly records: DecisionRecordStore,
    private readonly options: DecisionRecorderOptions,
    private readonly logger: Logger,
  ) {}

  /** Encodes a record onto its page for the next insert; drops it (counted) when the buffer is full, the recorder closed, or the record cannot be encoded. */
  record(record: DecisionRecord): void {
    if (this.closing) {
      this.dropped(1, 'shutdown');
      return;
    }
    if (this.buffered >= this.options.maxBuffered) {
      this.dropped(1, 'buffer_full');
      return;
    }
    let page = this.open.get(record.versionId);
    if (page && !sameKey(page.key, record)) {
      this.seal(page);
      page = undefined;
    }
    if (!page) {
      page = new PageBuilder(record);
      this.open.set(record.versionId, page);
    }
    let text: string;
    try {
      text = recordText(record);
    } catch (error) {
      // A value JSON cannot hold: a fault of this service, counted and logged.
      this.dropped(1, 'unrecordable', error);
      return;
    }
    if (!page.append(record, text)) {
      this.seal(page);
      page = new PageBuilder(record);
      this.open.set(record.versionId, page);
      page.append(record, text);
    }
    this.buffered += 1;
    if (page.count >= this.options.batchSize || page.bytes >= PAGE_TARGET_BYTES) this.seal(page);
    this.schedule();
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
    this.hurried = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const done = Promise.race([
      new Promise<void>((resolve) => {
        const previous = this.idle;
        this.idle = () => {
          previous?.();
          resolve();
        };
      }),
      new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
    ]);
    this.schedule();
    await done;
    this.hurried = false;
  }

  /** Stops taking records and stores the buffered ones (at most 10 s); any left then are counted as dropped. */
  async close(): Promise<void> {
    this.closing = true;
    await this.flush();
    if (this.buffered > 0) {
      this.dropped(this.buffered, 'shutdown');
      // Held through an outage that outlasted the close: counted, and not tried again.
      clearTimeout(this.timer);
      this.timer = undefined;
      for (const page of this.sealed) page.release();
      this.sealed = [];
      this.buffered = 0;
    }
    this.logCounts(true);
  }

  private seal(page: PageBuilder): void {
    this.open.delete(page.key.versionId);
    this.sealed.push(page.seal());
  }

  /** Starts an insert of everything held when INSERTS_IN_FLIGHT and flushIntervalMs allow, else arranges to. */
  private schedule(): void {
    if (this.inFlight >= INSERTS_IN_FLIGHT || this.timer !== undefined) return;
    if (this.sealed.length === 0 && this.open.size === 0) return;
    // An idle recorder waits a tick only, so that the records of one tick share a page; while MySQL is
    // unreachable, the next try waits for its back-off, hurried or not.
    const now = performance.now();
    const wait = Math.max(
      this.hurried ? 0 : this.lastStart + this.options.flushIntervalMs - now,
      this.retryNotBefore - now,
      0,
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, wait);
    // Tries during an outage alone never keep a process alive (a stopped one counted them as shutdown drops).
    if (this.retryNotBefore > now) this.timer.unref();
  }

  private start(): void {
    if (this.inFlight >= INSERTS_IN_FLIGHT) return;
    for (const page of [...this.open.values()]) this.seal(page);
    const pages = this.sealed;
    this.sealed = [];
    if (pages.length === 0) return;
    this.lastStart = performance.now();
    this.inFlight += 1;
    void this.insert(pages).finally(() => {
      this.inFlight -= 1;
      this.schedule();
    });
  }

  private settled(count: number): void {
    this.buffered -= count;
    if (this.buffered === 0 && this.idle) {
      const idle = this.idle;
      this.idle = undefined;
      idle();
    }
  }

  /** One group's insert: stored, dropped (counted), or held for the next try while MySQL is unreachable; never throws. */
  private async insert(pages: SealedPage[]): Promise<void> {
    let held: SealedPage[] = [];
    try {
      held = await this.store(pages);
    } catch (error) {
      // Not expected (store never throws): counted rather than lost.
      this.dropped(
        pages.reduce((sum, page) => sum + page.count, 0),
        'store_refused',
        error,
      );
    } finally {
      for (const page of pages) page.release();
      const heldCount = held.reduce((sum, page) => sum + page.count, 0);
      this.outage(held);
      this.settled(pages.reduce((sum, page) => sum + page.count, 0) - heldCount);
    }
  }

  /**
   * Held records go back to the front of the queue, tried again after a back-off; a group stored
   * clears it. Logged once when the outage begins and once when the records are stored again.
   */
  private outage(held: SealedPage[]): void {
    if (held.length === 0) {
      if (this.outageRetryMs > 0) this.logger.warn('decision records stored again after MySQL was unreachable');
      this.outageRetryMs = 0;
      this.retryNotBefore = 0;
      return;
    }
    if (this.outageRetryMs === 0)
      this.logger.warn(
        { held: held.length },
        'MySQL is unreachable: decision records are held and tried again until it answers',
      );
    this.outageRetryMs = Math.min(Math.max(OUTAGE_RETRY_MIN_MS, this.outageRetryMs * 2), OUTAGE_RETRY_MAX_MS);
    this.retryNotBefore = performance.now() + this.outageRetryMs;
    this.sealed.unshift(...held);
  }

  /** Stores the pages; answers the records to hold for the next try (MySQL unreachable), as pages of their own. */
  private async store(pages: SealedPage[]): Promise<SealedPage[]> {
    try {
      await this.records.insertPages(pages);
      return [];
    } catch (failure) {
      // The statements before the failed one stored their pages: only the others are stored one by one.
      const stored = failure instanceof PagesPartlyStoredError ? failure.storedPages : 0;
      const error = failure instanceof PagesPartlyStoredError ? failure.cause : failure;
      pages = pages.slice(stored);
      if (error instanceof RecordsStoredWithChangesError) {
        this.logger.error(
          { err: error, pages: pages.length },
          'decision records stored with values the database changed',
        );
        return [];
      }
      const records = pages.reduce((sum, page) => sum + page.count, 0);
      if (isDatabaseUnavailable(error) && records === 1) return this.lostConnection(pages, error);
      // A lost connection is not always an outage: a record larger than max_allowed_packet makes the server
      // close it too. One by one tells the two apart, and stores the others.
      this.logger.warn({ err: error, records }, 'a bulk insert of decision records failed: storing them one by one');
    }
    return this.storeOneByOne(pages.flatMap((page) => page.split()));
  }

  /**
   * One bad record fails its whole statement: the others are stored one by one (pages of one record).
   * A record whose insert loses the connection while MySQL still answers was refused (larger than
   * max_allowed_packet: the server closes the connection); while MySQL does not answer, that record and
   * the rest are held for the next try. Answers the records held.
   */
  private async storeOneByOne(records: SealedPage[]): Promise<SealedPage[]> {
    let refused = 0;
    let lastRefusal: unknown;
    for (let k = 0; k < records.length; k += 1) {
      try {
        await this.insertOne(records[k]);
      } catch (error) {
        if (isDatabaseUnavailable(error)) {
          const held = await this.lostConnection(records.slice(k), error);
          if (held.length > 0) {
            if (refused > 0) this.dropped(refused, 'store_refused', lastRefusal);
            return held;
          }
          continue;
        }
        refused += 1;
        lastRefusal = error;
      }
    }
    if (refused > 0) this.dropped(refused, 'store_refused', lastRefusal);
    return [];
  }

  /**
   * `records[0]`'s insert lost its connection. While MySQL does not answer, every one of `records` is
   * held (answered). While it answers, either it refused that record (the server closes the connection
   * under a statement over max_allowed_packet) or it has just come back: one more try tells, and a
   * record lost again while MySQL answers is dropped, counted as refused.
   */
  private async lostConnection(records: SealedPage[], error: unknown): Promise<SealedPage[]> {
    if (!(await this.records.databaseAnswers())) return records.map(detached);
    try {
      await this.insertOne(records[0]);
      return [];
    } catch (again) {
      if (isDatabaseUnavailable(again) && !(await this.records.databaseAnswers())) return records.map(detached);
      this.dropped(records[0].count, 'store_refused', again ?? error);
      return [];
    }
  }

  /** One record's page; a lost connection is tried once more on a new one (the pool may have handed out one the last loss broke). */
  private async insertOne(record: SealedPage): Promise<void> {
    try {
      await this.records.insertPages([record]);
    } catch (error) {
      if (error instanceof RecordsStoredWithChangesError) {
        this.logger.error({ err: error }, 'decision records stored with values the database changed');
        return;
      }
      if (!isDatabaseUnavailable(error)) throw error;
      await this.records.insertPages([record]);
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
      const why =
        reason === 'buffer_full'
          ? 'the buffer is full (the database does not keep up)'
          : 'they came after the process began to stop';
      this.logger.error({ dropped, reason, maxBuffered: this.options.maxBuffered }, `decision records dropped: ${why}`);
    }
    this.unlogged.clear();
    this.lastCountLog = Date.now();
  }
}

/**
 * A one-record page held for the next try, on a copy of its bytes: the page it was cut from hands its
 * buffer back for reuse once its insert ends (release).
 */
function detached(page: SealedPage): SealedPage {
  const copy: SealedPage = {
    ...page,
    body: Buffer.from(page.body),
    ends: Buffer.from(page.ends),
    split: () => [copy],
    release: () => undefined,
  };
  return copy;
}
