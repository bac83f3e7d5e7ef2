import type { TraceEntry } from '../engine/index.js';
import type { DecisionRecord, PortCapture, RecordError, RecordMode, RecordState } from './decision-record.js';

/**
 * Decision records are stored in pages (docs/records.md, "Storage"): one row of
 * `decision_record_pages` holds many records of one scenario version, each as a JSON text of its
 * own, one after another in `body`, with their end offsets in `ends`. Writing a record is then
 * encoding it once into a buffer, and the database stores one row per page instead of a row and
 * five index entries per record: measured, about a third of the CPU a record cost as a row of its
 * own (docs/benchmarks.md, "Decision records"). A reader parses only the records it returns.
 *
 * A record's JSON text (format 1) is an array, in this order:
 * `[id, requesterId, requestId, mode, batchId, state, beganAtMs, endedAtMs, durationMicros, inputs,
 * result, error, maskedInputs, trace, captures]` (null for an absent value; maskedInputs, trace and
 * captures null when empty). What every record of a page shares (owner, scenario, name, version) is
 * a column of the page.
 */
export const PAGE_FORMAT = 1;

/** What the records of a page share. */
export interface PageKey {
  ownerId: number;
  scenarioId: number;
  scenarioName: string;
  version: string;
  versionId: number;
}

/** A page ready to be inserted: its columns, and its records' boundaries (a page the database refuses is stored record by record). */
export interface SealedPage {
  key: PageKey;
  /** The records' JSON texts, one after another. */
  body: Buffer;
  /** Where each record's text ends in `body`, 4 bytes big-endian each (the `ends` column). */
  ends: Buffer;
  /** `\n`-separated, with a `\n` before the first and after the last (so `\n<id>\n` finds exactly one). */
  ids: string;
  requestIds: string;
  count: number;
  failed: number;
  firstBeganAt: Date;
  lastBeganAt: Date;
  /** The page's records as pages of one, in order (storing record by record). */
  split(): SealedPage[];
  /** Hands the page's buffer back for the next page once the page is stored or dropped. */
  release(): void;
}

/** Bytes a page's records fill before it is sealed (more only for a single larger record). */
export const PAGE_TARGET_BYTES = 1 << 20;

/**
 * Buffers of PAGE_TARGET_BYTES kept for the next pages: a page's buffer lives outside V8's heap, and
 * allocating a fresh one every flush interval makes the garbage collector run for external memory.
 */
const spare: Buffer[] = [];
const MAX_SPARE = 8;

function takeBuffer(size: number): Buffer {
  if (size <= PAGE_TARGET_BYTES) return spare.pop() ?? Buffer.allocUnsafe(PAGE_TARGET_BYTES);
  return Buffer.allocUnsafe(size);
}

function giveBack(buffer: Buffer): void {
  if (buffer.length === PAGE_TARGET_BYTES && spare.length < MAX_SPARE) spare.push(buffer);
}

/** One record as its page JSON text (format 1). Throws what JSON.stringify throws for a value JSON cannot hold. */
export function recordText(record: DecisionRecord): string {
  return (
    `[${JSON.stringify(record.id)},${record.requesterId},${JSON.stringify(record.requestId)},"${record.mode}",` +
    `${record.batchId === null ? 'null' : JSON.stringify(record.batchId)},"${record.state}",${record.beganAt.getTime()},${record.endedAt.getTime()},${record.durationMicros},` +
    `${JSON.stringify(record.inputs)},${record.result === null ? 'null' : JSON.stringify(record.result)},${record.error === null ? 'null' : JSON.stringify(record.error)},` +
    `${record.maskedInputs.length > 0 ? JSON.stringify(record.maskedInputs) : 'null'},${record.trace ? JSON.stringify(record.trace) : 'null'},` +
    `${record.captures.length > 0 ? JSON.stringify(record.captures) : 'null'}]`
  );
}

/** Whether a record belongs on a page of this key. */
export function sameKey(key: PageKey, record: DecisionRecord): boolean {
  return (
    key.versionId === record.versionId &&
    key.scenarioId === record.scenarioId &&
    key.scenarioName === record.scenarioName &&
    key.ownerId === record.ownerId &&
    key.version === record.version
  );
}

/** A page being filled: each record is encoded as it comes, so nothing of it but its text outlives the run. */
export class PageBuilder {
  readonly key: PageKey;
  private buffer: Buffer;
  private length = 0;
  private readonly endOffsets: number[] = [];
  private readonly recordIds: string[] = [];
  private readonly requestIdsOf: string[] = [];
  private readonly began: number[] = [];
  private readonly failures: boolean[] = [];
  private failed = 0;

  constructor(first: DecisionRecord) {
    this.key = {
      ownerId: first.ownerId,
      scenarioId: first.scenarioId,
      scenarioName: first.scenarioName,
      version: first.version,
      versionId: first.versionId,
    };
    this.buffer = takeBuffer(0);
  }

  get count(): number {
    return this.endOffsets.length;
  }

  get bytes(): number {
    return this.length;
  }

  /**
   * Adds a record, as `recordText` made it, to the page. False (the page unchanged) when the page holds
   * records and this one might not fit its buffer: seal the page and start the next with it. An empty
   * page takes any record, growing its buffer for a larger one.
   */
  append(record: DecisionRecord, text: string): boolean {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8: measuring the text exactly would cost a pass over it.
    const needed = this.length + 3 * text.length;
    if (needed > this.buffer.length) {
      if (this.count > 0) return false;
      giveBack(this.buffer);
      this.buffer = takeBuffer(needed);
    }
    this.length += this.buffer.write(text, this.length, 'utf8');
    this.endOffsets.push(this.length);
    this.recordIds.push(record.id);
    this.requestIdsOf.push(record.requestId);
    this.began.push(record.beganAt.getTime());
    const failed = record.state === 'FAILED';
    this.failures.push(failed);
    if (failed) this.failed += 1;
    return true;
  }

  /** The page as it stands, for inserting; the builder is not used after. */
  seal(): SealedPage {
    const buffer = this.buffer;
    return this.sealed(0, this.count, buffer, () => giveBack(buffer));
  }

  private sealed(from: number, to: number, buffer: Buffer, release: () => void): SealedPage {
    const start = from === 0 ? 0 : this.endOffsets[from - 1];
    const ends = Buffer.allocUnsafe(4 * (to - from));
    let first = Infinity;
    let last = -Infinity;
    let failed = 0;
    for (let k = from; k < to; k += 1) {
      ends.writeUInt32BE(this.endOffsets[k] - start, 4 * (k - from));
      first = Math.min(first, this.began[k]);
      last = Math.max(last, this.began[k]);
      if (this.failures[k]) failed += 1;
    }
    const ids = this.recordIds.slice(from, to);
    const requestIds = this.requestIdsOf.slice(from, to);
    return {
      key: this.key,
      body: buffer.subarray(start, to === 0 ? 0 : this.endOffsets[to - 1]),
      ends,
      ids: `\n${ids.join('\n')}\n`,
      requestIds: `\n${requestIds.join('\n')}\n`,
      count: to - from,
      failed,
      firstBeganAt: new Date(first),
      lastBeganAt: new Date(last),
      split: () =>
        Array.from({ length: to - from }, (_, k) => this.sealed(from + k, from + k + 1, buffer, () => undefined)),
      release,
    };
  }
}

/** Records as pages, in order: a new page where the key changes or a page reached PAGE_TARGET_BYTES. */
export function pagesOf(records: readonly DecisionRecord[]): SealedPage[] {
  const pages: SealedPage[] = [];
  let builder: PageBuilder | undefined;
  for (const record of records) {
    if (builder && (!sameKey(builder.key, record) || builder.bytes >= PAGE_TARGET_BYTES)) {
      pages.push(builder.seal());
      builder = undefined;
    }
    const text = recordText(record);
    builder ??= new PageBuilder(record);
    if (!builder.append(record, text)) {
      pages.push(builder.seal());
      builder = new PageBuilder(record);
      builder.append(record, text);
    }
  }
  if (builder && builder.count > 0) pages.push(builder.seal());
  return pages;
}

/** A stored page, as read back. */
export interface StoredPage {
  seq: number;
  key: PageKey;
  body: Buffer;
  ends: Buffer;
}

/** Records on a stored page. */
export function recordsOnPage(page: StoredPage): number {
  return page.ends.length / 4;
}

/** Where record `slot` of a page starts and ends in its body. */
export function recordBounds(page: StoredPage, slot: number): [number, number] {
  return [slot === 0 ? 0 : page.ends.readUInt32BE(4 * (slot - 1)), page.ends.readUInt32BE(4 * slot)];
}

type RecordTuple = [
  string,
  number,
  string,
  RecordMode,
  string | null,
  RecordState,
  number,
  number,
  number,
  Record<string, unknown>,
  Record<string, unknown> | null,
  RecordError | null,
  string[] | null,
  TraceEntry[] | null,
  PortCapture[] | null,
];

/** Record `slot` of a stored page, parsed. */
export function readRecord(page: StoredPage, slot: number): DecisionRecord {
  const [start, end] = recordBounds(page, slot);
  const [
    id,
    requesterId,
    requestId,
    mode,
    batchId,
    state,
    beganAt,
    endedAt,
    durationMicros,
    inputs,
    result,
    error,
    maskedInputs,
    trace,
    captures,
  ] = JSON.parse(page.body.toString('utf8', start, end)) as RecordTuple;
  return {
    id,
    ...page.key,
    mode,
    requesterId,
    requestId,
    batchId,
    state,
    inputs,
    maskedInputs: maskedInputs ?? [],
    result,
    error,
    beganAt: new Date(beganAt),
    endedAt: new Date(endedAt),
    durationMicros,
    trace,
    captures: captures ?? [],
  };
}
