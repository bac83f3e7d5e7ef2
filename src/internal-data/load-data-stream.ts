import { Readable } from 'node:stream';
import type { ColumnType } from './column-types.js';
import type { CsvFile } from './csv-file.js';
import { scanCsvChunks, type FieldSink } from './csv-shape-scanner.js';

/**
 * What the fast path sends to `LOAD DATA LOCAL INFILE`: never the uploaded file itself, but our own
 * re-encoding of its (already validated) data rows, in the one format the statement in
 * `InternalDataStore.loadLocal` declares:
 *
 * - one row per line, ended by `\n`; fields separated by a tab; the first field is `_row_id`;
 * - an empty cell is `\N` (NULL); every other value is escaped with a backslash: `\\`, `\t`,
 *   `\n`, `\r`, `\0` — so a value can hold tabs, line breaks, backslashes and the text `\N`;
 * - INTEGER and DOUBLE values as written (a DOUBLE ending in `.` gets a `0`), BOOLEAN as `1`/`0`.
 *
 * The records are read with the first pass's tokenizer (`csv-shape-scanner.ts`), so both passes see
 * exactly the same rows.
 */
export interface LoadDataPlan {
  /** The table type of each file column, in file order. */
  types: ColumnType[];
  /** `_row_id` of the first data row; the following rows count up from it (load order). */
  firstRowId: number;
}

export interface LoadDataSource {
  readable: Readable;
  /** Data rows encoded so far (all of them once `readable` has ended). */
  rows(): number;
}

/** Bytes per chunk read from the upload, and at most per chunk handed to the connection (one protocol packet each, far below `max_allowed_packet`). */
const READ_CHUNK_CHARS = 256 << 10;
const MAX_OUT_BYTES = 1 << 20;

const NEEDS_ESCAPE = /[\\\t\n\r\0]/;
const ESCAPABLE = /[\\\t\n\r\0]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

export function escapeLoadDataValue(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(ESCAPABLE, (char) => ESCAPES[char]) : value;
}

/** True when `text[start, end)` holds a character that must be escaped. */
function rangeNeedsEscape(text: string, start: number, end: number): boolean {
  for (let index = start; index < end; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 92 || code === 9 || code === 10 || code === 13 || code === 0) return true;
  }
  return false;
}

/** Builds the lines of complete records; a record cut by the end of a chunk is dropped and comes again. */
class LoadDataSink implements FieldSink {
  private out = '';
  private row = '';
  private headerSeen = false;
  private nextRowId: number;
  rows = 0;

  constructor(private readonly types: readonly ColumnType[], firstRowId: number) {
    this.nextRowId = firstRowId;
  }

  range(text: string, start: number, end: number, field: number): void {
    if (!this.headerSeen) return;
    const type = this.types[field];
    if (type === 'STRING') {
      this.row += rangeNeedsEscape(text, start, end) ? `\t${escapeLoadDataValue(text.slice(start, end))}` : `\t${text.slice(start, end)}`;
    } else {
      this.row += `\t${this.scalar(text.slice(start, end), type, field)}`;
    }
  }

  value(value: string, field: number): void {
    if (!this.headerSeen) return;
    if (value === '') {
      this.row += '\t\\N';
      return;
    }
    const type = this.types[field];
    this.row += `\t${type === 'STRING' ? escapeLoadDataValue(value) : this.scalar(value, type, field)}`;
  }

  record(fields: number, line: number): void {
    if (!this.headerSeen) {
      this.headerSeen = true;
      this.row = '';
      return;
    }
    // The first pass checked every row's width; a file changed since then is not loaded.
    if (fields !== this.types.length) throw new Error(`line ${line} has ${fields} fields, the header has ${this.types.length} (the upload changed between passes)`);
    this.out += `${this.nextRowId}${this.row}\n`;
    this.nextRowId += 1;
    this.rows += 1;
    this.row = '';
  }

  abandon(): void {
    this.row = '';
  }

  /** The lines built since the last call. */
  take(): string {
    const out = this.out;
    this.out = '';
    return out;
  }

  private scalar(value: string, type: ColumnType | undefined, field: number): string {
    switch (type) {
      case 'INTEGER': return value;
      case 'DOUBLE': return value.charCodeAt(value.length - 1) === 46 ? `${value}0` : value; // `1.` → `1.0`
      case 'BOOLEAN': return value.length === 4 ? '1' : '0'; // validated: true/false in any case
      case 'STRING': return escapeLoadDataValue(value);
      default: throw new Error(`field ${field + 1} is beyond the header`);
    }
  }
}

/** The data rows of `csv` as the `LOAD DATA` input described above, read from disk as the connection asks for it. */
export function loadDataSource(csv: CsvFile, plan: LoadDataPlan): LoadDataSource {
  const sink = new LoadDataSink(plan.types, plan.firstRowId);
  async function* produce(): AsyncGenerator<Buffer> {
    for await (const _ of scanCsvChunks(csv.path, csv.dialect, sink, READ_CHUNK_CHARS)) {
      const text = sink.take();
      if (text === '') continue;
      const bytes = Buffer.from(text, 'utf8');
      for (let offset = 0; offset < bytes.length; offset += MAX_OUT_BYTES) yield bytes.subarray(offset, offset + MAX_OUT_BYTES);
    }
  }
  return { readable: Readable.from(produce(), { objectMode: false, highWaterMark: MAX_OUT_BYTES }), rows: () => sink.rows };
}
