import Papa from 'papaparse';
import type { BatchElementResult } from './batch-store.js';

const CSV_COLUMNS = ['index', 'resultId', 'state', 'result', 'error'];

/**
 * A finished batch's results as CSV (getBatchResults with `Accept: text/csv`, docs/execution.md
 * "Batch results"): the header row, then one row per element, one piece per page. `result` and
 * `error` cells hold JSON text, empty when null. (NDJSON needs no formatting here: its lines are the
 * pages' elements, written by the reply writer.)
 */
export async function* batchResultsCsv(pages: AsyncIterable<BatchElementResult[]>): AsyncGenerator<string> {
  yield `${Papa.unparse([CSV_COLUMNS], { newline: '\r\n' })}\r\n`;
  for await (const page of pages) {
    const rows = page.map((line) => [
      line.index,
      line.resultId,
      line.state,
      line.result ? JSON.stringify(line.result) : '',
      line.error ? JSON.stringify(line.error) : '',
    ]);
    yield `${Papa.unparse(rows, { newline: '\r\n' })}\r\n`;
  }
}
