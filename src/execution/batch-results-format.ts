import Papa from 'papaparse';
import type { BatchElementResult } from './batch-store.js';

/** The two encodings of getBatchResults (docs/execution.md "Batch results"). */
export type BatchResultsFormat = 'ndjson' | 'csv';

export const BATCH_RESULTS_MEDIA_TYPES: Record<BatchResultsFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

const CSV_COLUMNS = ['index', 'resultId', 'state', 'result', 'error'];

/** What the stream begins with: the CSV header row; nothing for NDJSON. */
export function batchResultsPreamble(format: BatchResultsFormat): string {
  return format === 'csv' ? Papa.unparse([CSV_COLUMNS], { newline: '\r\n' }) + '\r\n' : '';
}

/** One page of lines (schema BatchResultLine for NDJSON; JSON text in the result and error cells of CSV, empty when null). */
export function formatBatchResults(format: BatchResultsFormat, page: BatchElementResult[]): string {
  if (format === 'ndjson') {
    let text = '';
    for (const line of page) text += JSON.stringify({ index: line.index, resultId: line.resultId, state: line.state, result: line.result, error: line.error }) + '\n';
    return text;
  }
  const rows = page.map((line) => [line.index, line.resultId, line.state, line.result ? JSON.stringify(line.result) : '', line.error ? JSON.stringify(line.error) : '']);
  return Papa.unparse(rows, { newline: '\r\n' }) + '\r\n';
}
