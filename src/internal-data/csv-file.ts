import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import Papa from 'papaparse';
import { BadRequestError } from '../errors/bad-request-error.js';

/** How a CSV file is written: detected from its header line. */
export interface CsvDialect {
  delimiter: ',' | ';' | '\t';
  newline: '\n' | '\r\n' | '\r';
}

/** Records parsed from one chunk of the file; `firstLine` is the line number of `records[0]`. */
export interface CsvBatch {
  records: string[][];
  firstLine: number;
}

/** A blank line parses as one empty field; every pass skips it (it is not a row of NULLs). */
export function isBlankRecord(record: readonly string[]): boolean {
  return record.length === 1 && record[0] === '';
}

const SNIFF_BYTES = 1 << 20;
/**
 * Longest record (one CSV line, quoted line breaks included) in characters: room for the largest
 * value a column holds (MEDIUMTEXT, 4,194,303 characters) and more. A record cut by the end of a
 * chunk is parsed again with the next one, so without a bound one endless record (an unterminated
 * quote) would be re-read once per chunk: quadratic work for one upload.
 */
export const MAX_RECORD_CHARS = 8 << 20;
const DEFAULT_CHUNK_BYTES = 256 << 10;

/**
 * Finds the header line (up to the first newline outside quotes) and picks the delimiter it uses
 * most among `,` `;` and tab (`,` on a tie or a single column).
 */
function detectDialect(head: string): { dialect: CsvDialect; headerComplete: boolean } {
  let inQuotes = false;
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let newline: CsvDialect['newline'] | undefined;
  for (let index = 0; index < head.length; index += 1) {
    const char = head[index];
    if (char === '"') inQuotes = !inQuotes;
    else if (inQuotes) continue;
    else if (char === ',' || char === ';' || char === '\t') counts[char] += 1;
    else if (char === '\n') {
      newline = '\n';
      break;
    } else if (char === '\r') {
      newline = head[index + 1] === '\n' ? '\r\n' : '\r';
      break;
    }
  }
  const delimiter = (
    counts[';'] > counts[','] && counts[';'] >= counts['\t'] ? ';' : counts['\t'] > counts[','] ? '\t' : ','
  ) as CsvDialect['delimiter'];
  return { dialect: { delimiter, newline: newline ?? '\n' }, headerComplete: newline !== undefined };
}

/**
 * A CSV file on disk, read as a stream (bounded memory whatever its size) and parsed with
 * papaparse's parser chunk by chunk: the one tokenizer of every pass over an upload (the first
 * pass's checks and inference, and both ways of sending the rows), so they all see the same
 * records. Line numbers count records: the header is line 1, and a quoted value spanning several
 * physical lines is still one line.
 */
export class CsvFile {
  private constructor(
    readonly path: string,
    readonly dialect: CsvDialect,
    private readonly chunkBytes: number,
  ) {}

  /** Reads the start of the file to learn its dialect; an empty file is 400 INVALID_CSV. */
  static async open(path: string, chunkBytes = DEFAULT_CHUNK_BYTES): Promise<CsvFile> {
    const handle = await open(path, 'r');
    let head: string;
    try {
      const buffer = Buffer.alloc(SNIFF_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
      head = buffer
        .subarray(0, bytesRead)
        .toString('utf8')
        .replace(/^\uFEFF/, '');
    } finally {
      await handle.close();
    }
    if (head.trim() === '')
      throw new BadRequestError('The file is empty: a CSV file needs a header row.', 'INVALID_CSV', [
        { path: 'line 1', message: 'no header row' },
      ]);
    return new CsvFile(path, detectDialect(head).dialect, chunkBytes);
  }

  /** Every record of the file (header first), in batches; blank lines come as `['']`. */
  async *batches(): AsyncGenerator<CsvBatch> {
    const parser = new Papa.Parser({
      delimiter: this.dialect.delimiter,
      newline: this.dialect.newline,
      quoteChar: '"',
      escapeChar: '"',
    });
    const stream = createReadStream(this.path, { encoding: 'utf8', highWaterMark: this.chunkBytes });
    let pending = '';
    let line = 1;
    let first = true;
    try {
      for await (const chunk of stream as AsyncIterable<string>) {
        let text = pending + chunk;
        if (first) {
          text = text.replace(/^\uFEFF/, '');
          first = false;
        }
        const result = parser.parse(text, 0, true) as Papa.ParseResult<string[]>;
        this.assertParsed(result, line, false);
        pending = text.substring(result.meta.cursor);
        if (pending.length > MAX_RECORD_CHARS) {
          const at = line + result.data.length;
          throw new BadRequestError(
            `The CSV has a record longer than ${MAX_RECORD_CHARS} characters at line ${at} (an unterminated quote?).`,
            'INVALID_CSV',
            [{ path: `line ${at}`, line: at, message: `longer than ${MAX_RECORD_CHARS} characters` }],
          );
        }
        if (result.data.length > 0) {
          yield { records: result.data, firstLine: line };
          line += result.data.length;
        }
      }
      if (pending !== '') {
        const result = parser.parse(pending, 0, false) as Papa.ParseResult<string[]>;
        this.assertParsed(result, line, true);
        // A final newline leaves one empty record behind: not a line of data.
        const records =
          result.data.length > 0 &&
          result.data[result.data.length - 1].length === 1 &&
          result.data[result.data.length - 1][0] === ''
            ? result.data.slice(0, -1)
            : result.data;
        if (records.length > 0) yield { records, firstLine: line };
      }
    } finally {
      stream.destroy();
    }
  }

  /** Errors of the record cut by the end of a chunk are not errors yet: it is parsed again with the next chunk. */
  private assertParsed(result: Papa.ParseResult<string[]>, firstLine: number, final: boolean): void {
    if (result.errors.length === 0) return;
    const errors = final ? result.errors : result.errors.filter((error) => (error.row ?? 0) < result.data.length);
    if (errors.length === 0) return;
    const details = errors.slice(0, 20).map((error) => {
      const line = firstLine + (error.row ?? 0);
      return { path: `line ${line}`, line, message: `${error.message} (${error.code})` };
    });
    throw new BadRequestError(
      `The CSV is malformed at line ${details[0].line}: ${errors[0].message}.`,
      'INVALID_CSV',
      details,
    );
  }
}
