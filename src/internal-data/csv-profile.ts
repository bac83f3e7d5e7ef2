import { BadRequestError } from '../errors/bad-request-error.js';
import { assertHeader } from './collection-rules.js';
import {
  classify,
  IS_BOOLEAN,
  IS_DOUBLE,
  IS_INTEGER,
  IS_STRING,
  typeOfClasses,
  type CollectionColumnType,
} from './column-types.js';
import { isBlankRecord, type CsvFile } from './csv-file.js';
import { rowWidthMessage } from './row-encoder.js';

/** What the first pass learned about one column. */
interface ColumnProfile {
  name: string;
  /** Bit set of the value classes seen (IS_INTEGER, …); 0 when every value was empty. */
  classes: number;
  /** The first line holding a value of each class, by class bit. */
  firstLineOfClass: Map<number, number>;
  nullable: boolean;
  maxLength: number;
  maxLengthLine: number;
  type: CollectionColumnType;
}

export interface CsvProfile {
  header: string[];
  columns: ColumnProfile[];
  /** Data rows (blank lines excluded). */
  rows: number;
}

const MAX_REPORTED_PROBLEMS = 20;

/** Collects the first pass's counters, record by record. */
class Profiler {
  header: string[] | undefined;
  columns: ColumnProfile[] = [];
  rows = 0;
  readonly problems: Array<{ path: string; line: number; message: string }> = [];

  record(record: readonly string[], line: number): void {
    if (!this.header) {
      this.header = record.map((name) => name.trim());
      assertHeader(this.header);
      this.columns = this.header.map((name) => ({
        name,
        classes: 0,
        firstLineOfClass: new Map(),
        nullable: false,
        maxLength: 0,
        maxLengthLine: 0,
        type: 'STRING',
      }));
      return;
    }
    const width = this.columns.length;
    if (record.length !== width) {
      if (this.problems.length < MAX_REPORTED_PROBLEMS)
        this.problems.push({ path: `line ${line}`, line, message: rowWidthMessage(line, record.length, width) });
      return;
    }
    this.rows += 1;
    for (let index = 0; index < width; index += 1) {
      const value = record[index];
      const profile = this.columns[index];
      if (value === '') {
        profile.nullable = true;
        continue;
      }
      if (value.length > profile.maxLength) {
        profile.maxLength = value.length;
        profile.maxLengthLine = line;
      }
      // Once a column holds text, only lengths matter.
      if (profile.classes & IS_STRING) continue;
      const kind = classify(value);
      if (!(profile.classes & kind)) {
        profile.classes |= kind;
        profile.firstLineOfClass.set(kind, line);
      }
    }
  }
}

/**
 * The first pass over a file: checks the header and the shape of every row (a row with too few
 * or too many fields is 400 naming its line) and infers each column's type. Nothing is kept but
 * counters, so memory does not grow with the file. It reads the file with the same tokenizer as the
 * second pass (csv-file.ts), which checks every row again as it sends it (row-encoder.ts).
 */
export async function profileCsv(csv: CsvFile): Promise<CsvProfile> {
  const profiler = new Profiler();
  for await (const { records, firstLine } of csv.batches()) {
    for (let index = 0; index < records.length; index += 1) {
      if (!isBlankRecord(records[index])) profiler.record(records[index], firstLine + index);
    }
  }
  const { header, columns, rows, problems } = profiler;
  if (!header)
    throw new BadRequestError('The file is empty: a CSV file needs a header row.', 'INVALID_CSV', [
      { path: 'line 1', message: 'no header row' },
    ]);
  if (problems.length > 0) {
    throw new BadRequestError(
      `The CSV has rows of the wrong length: ${problems
        .slice(0, 3)
        .map((problem) => problem.message)
        .join('; ')}${problems.length > 3 ? '; …' : ''}.`,
      'INVALID_CSV',
      problems,
    );
  }
  if (rows === 0) {
    throw new BadRequestError('The file has a header row but no data rows: nothing to load.', 'INVALID_CSV', [
      { path: 'line 2', message: 'no data rows' },
    ]);
  }
  for (const column of columns) column.type = typeOfClasses(column.classes);
  return { header, columns, rows };
}

export const VALUE_CLASSES = [IS_INTEGER, IS_DOUBLE, IS_BOOLEAN, IS_STRING] as const;
