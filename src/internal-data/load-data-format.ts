import { Readable } from 'node:stream';
import { escapeLoadDataValue } from '../db/local-infile.js';
import type { CellValue } from './row-encoder.js';

/**
 * What the store sends to `LOAD DATA LOCAL INFILE`: never the uploaded file itself, but encoded
 * rows (row-encoder.ts) written in the one format the statement in `InternalDataStore.loadLocal`
 * declares, LOAD_DATA_FORMAT (src/db/local-infile.ts), the first field of each row being `_row_id`.
 */
export interface LoadDataSource {
  readable: Readable;
  /** Rows written so far (all of them once `readable` has ended). */
  rows(): number;
}

/** At most this many bytes per chunk handed to the connection (one protocol packet each, far below `max_allowed_packet`). */
const MAX_OUT_BYTES = 1 << 20;

/** `batches` of rows as LOAD DATA input, numbered from `firstRowId`, produced as the connection asks for them (backpressure). */
export function loadDataSource(batches: AsyncIterable<CellValue[][]>, firstRowId: number): LoadDataSource {
  let rowId = firstRowId;
  async function* produce(): AsyncGenerator<Buffer> {
    for await (const rows of batches) {
      let text = '';
      for (const row of rows) {
        text += rowId;
        for (const cell of row) text += cell === null ? '\t\\N' : `\t${escapeLoadDataValue(cell)}`;
        text += '\n';
        rowId += 1;
      }
      const bytes = Buffer.from(text, 'utf8');
      for (let offset = 0; offset < bytes.length; offset += MAX_OUT_BYTES)
        yield bytes.subarray(offset, offset + MAX_OUT_BYTES);
    }
  }
  return {
    readable: Readable.from(produce(), { objectMode: false, highWaterMark: MAX_OUT_BYTES }),
    rows: () => rowId - firstRowId,
  };
}
