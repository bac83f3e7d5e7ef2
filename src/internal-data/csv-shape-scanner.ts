import { createReadStream } from 'node:fs';
import { BadRequestError } from '../errors/bad-request-error.js';
import type { CsvDialect } from './csv-file.js';

/** Receives the fields of each record as ranges of `text` (no strings are cut for unquoted fields). */
export interface FieldSink {
  /** An unquoted field: `text.slice(start, end)`. */
  range(text: string, start: number, end: number, field: number, line: number): void;
  /** A quoted field, unescaped. */
  value(value: string, field: number, line: number): void;
  /** End of a record of `fields` fields (blank lines are not reported). */
  record(fields: number, line: number): void;
  /** The record being reported is cut by the end of the chunk: its fields come again with the next chunk. */
  abandon(): void;
}

const QUOTE = 34;

/**
 * The first pass's tokenizer: the same RFC 4180 reading as papaparse (which the second pass uses to
 * get the values), written to allocate nothing per unquoted field, because the first pass only
 * counts fields, classifies values and measures lengths. Line numbers count records (header = 1).
 */
export async function scanCsv(path: string, dialect: CsvDialect, sink: FieldSink, chunkBytes = 1 << 20): Promise<void> {
  for await (const _ of scanCsvChunks(path, dialect, sink, chunkBytes)) { /* the sink has what it needs */ }
}

/**
 * `scanCsv` one chunk at a time: yields after the complete records of each chunk have been reported
 * to `sink` (so a consumer can hand on what the sink built, with backpressure: the next chunk is read
 * only when the consumer asks for it).
 */
export async function* scanCsvChunks(path: string, dialect: CsvDialect, sink: FieldSink, chunkBytes = 1 << 20): AsyncGenerator<void> {
  const delimiter = dialect.delimiter.charCodeAt(0);
  const newline = dialect.newline;
  const newlineFirst = newline.charCodeAt(0);
  const crlf = newline === '\r\n';
  let pending = '';
  let line = 1;
  let first = true;

  const incomplete = (recordStart: number): number => {
    sink.abandon();
    return recordStart;
  };

  /** Scans complete records of `text`; answers where the first incomplete one starts (text.length when none). */
  const scan = (text: string, final: boolean): number => {
    const length = text.length;
    let position = 0;
    while (position < length) {
      const recordStart = position;
      let field = 0;
      let blank = true;
      for (;;) {
        if (text.charCodeAt(position) === QUOTE) {
          let close = text.indexOf('"', position + 1);
          while (close !== -1 && text.charCodeAt(close + 1) === QUOTE) close = text.indexOf('"', close + 2);
          if (close === -1 || (close === length - 1 && !final)) {
            if (!final) return incomplete(recordStart);
            throw malformed(line, 'Quoted field unterminated');
          }
          const after = close + 1;
          const next = after < length ? text.charCodeAt(after) : -1;
          const endsRecord = next === -1 || (next === newlineFirst && (!crlf || text.charCodeAt(after + 1) === 10));
          if (next !== delimiter && !endsRecord) {
            if (crlf && next === 13 && after + 1 >= length && !final) return incomplete(recordStart);
            throw malformed(line, 'Trailing quote on quoted field is malformed');
          }
          sink.value(text.slice(position + 1, close).replace(/""/g, '"'), field, line);
          blank = false;
          field += 1;
          if (next === delimiter) { position = after + 1; continue; }
          position = after + (next === -1 ? 0 : newline.length);
          break;
        }
        let end = position;
        let code = -1;
        while (end < length) {
          code = text.charCodeAt(end);
          if (code === delimiter) break;
          if (code === newlineFirst && (!crlf || text.charCodeAt(end + 1) === 10)) break;
          if (crlf && code === 13 && end + 1 >= length && !final) return incomplete(recordStart);
          end += 1;
        }
        if (end >= length && !final) return incomplete(recordStart);
        if (end > position || code === delimiter) blank = false;
        if (end > position) sink.range(text, position, end, field, line);
        else if (field > 0 || code === delimiter) sink.value('', field, line); // not for a blank line
        field += 1;
        if (end < length && code === delimiter) {
          position = end + 1;
          if (position >= length) {
            if (!final) return incomplete(recordStart);
            sink.value('', field, line);
            field += 1;
            break;
          }
          continue;
        }
        position = end >= length ? length : end + newline.length;
        break;
      }
      if (!(blank && field === 1)) sink.record(field, line);
      line += 1;
    }
    return length;
  };

  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: chunkBytes });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let text = pending + chunk;
      if (first) {
        text = text.replace(/^\uFEFF/, '');
        first = false;
      }
      pending = text.slice(scan(text, false));
      yield;
    }
    if (pending !== '') scan(pending, true);
    yield;
  } finally {
    stream.destroy();
  }
}

function malformed(line: number, reason: string): BadRequestError {
  return new BadRequestError(`The CSV is malformed at line ${line}: ${reason}.`, 'INVALID_CSV', [{ path: `line ${line}`, line, message: reason }]);
}
