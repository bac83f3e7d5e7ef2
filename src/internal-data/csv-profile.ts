import { BadRequestError } from '../errors/bad-request-error.js';
import { assertHeader } from './collection-rules.js';
import { classify, IS_BOOLEAN, IS_DOUBLE, IS_INTEGER, IS_STRING, typeOfClasses, type ColumnType } from './column-types.js';
import type { CsvFile } from './csv-file.js';
import { scanCsv, type FieldSink } from './csv-shape-scanner.js';

/** What the first pass learned about one column. */
export interface ColumnProfile {
  name: string;
  /** Bit set of the value classes seen (IS_INTEGER, …); 0 when every value was empty. */
  classes: number;
  /** The first line holding a value of each class, by class bit. */
  firstLineOfClass: Map<number, number>;
  nullable: boolean;
  maxLength: number;
  maxLengthLine: number;
  type: ColumnType;
}

export interface CsvProfile {
  header: string[];
  columns: ColumnProfile[];
  /** Data rows (blank lines excluded). */
  rows: number;
}

const MAX_REPORTED_PROBLEMS = 20;

/** A blank line parses as one empty field; it is skipped, not loaded as a row of NULLs. */
export function isBlankRecord(record: string[]): boolean {
  return record.length === 1 && record[0] === '';
}

/** `classify(text.slice(start, end))`, without cutting the string for plain integers (the common case). */
function classifyRange(text: string, start: number, end: number): number {
  let position = start;
  const first = text.charCodeAt(position);
  if (first === 45 || first === 43) position += 1;
  const digits = end - position;
  if (digits > 0 && digits < 19) {
    const lead = text.charCodeAt(position);
    if (lead >= 49 && lead <= 57) {
      let index = position + 1;
      while (index < end) {
        const code = text.charCodeAt(index);
        if (code < 48 || code > 57) break;
        index += 1;
      }
      if (index === end) return IS_INTEGER;
    } else if (lead === 48 && digits === 1) {
      return IS_INTEGER;
    }
  }
  return classify(text.slice(start, end));
}

/** Collects the first pass's counters from the tokenizer's fields. */
class ProfileSink implements FieldSink {
  header: string[] | undefined;
  columns: ColumnProfile[] = [];
  rows = 0;
  readonly problems: Array<{ path: string; line: number; message: string }> = [];
  private headerFields: string[] = [];
  private headerLine = 0;

  range(text: string, start: number, end: number, field: number, line: number): void {
    if (!this.header) {
      this.headerField(text.slice(start, end), line);
      return;
    }
    const profile = this.columns[field];
    if (!profile) return; // a row with too many fields: record() reports it
    const length = end - start;
    if (length > profile.maxLength) {
      profile.maxLength = length;
      profile.maxLengthLine = line;
    }
    // Once a column holds text, only lengths matter.
    if (profile.classes & IS_STRING) return;
    this.observe(profile, classifyRange(text, start, end), line);
  }

  value(value: string, field: number, line: number): void {
    if (!this.header) {
      this.headerField(value, line);
      return;
    }
    const profile = this.columns[field];
    if (!profile) return;
    if (value === '') {
      profile.nullable = true;
      return;
    }
    if (value.length > profile.maxLength) {
      profile.maxLength = value.length;
      profile.maxLengthLine = line;
    }
    if (profile.classes & IS_STRING) return;
    this.observe(profile, classify(value), line);
  }

  record(fields: number, line: number): void {
    if (!this.header) {
      this.header = this.headerFields.map((name) => name.trim());
      assertHeader(this.header);
      this.columns = this.header.map((name) => ({ name, classes: 0, firstLineOfClass: new Map(), nullable: false, maxLength: 0, maxLengthLine: 0, type: 'STRING' }));
      return;
    }
    const width = this.columns.length;
    if (fields === width) {
      this.rows += 1;
      return;
    }
    if (this.problems.length < MAX_REPORTED_PROBLEMS) {
      this.problems.push({ path: `line ${line}`, line, message: `line ${line} has ${fields} field${fields === 1 ? '' : 's'}, the header has ${width}` });
    }
  }

  /** Observations are idempotent (the same line again); only a cut header must be collected afresh. */
  abandon(): void {
    if (!this.header) this.headerFields = [];
  }

  private headerField(value: string, line: number): void {
    if (line !== this.headerLine) {
      this.headerFields = [];
      this.headerLine = line;
    }
    this.headerFields.push(value);
  }

  private observe(profile: ColumnProfile, kind: number, line: number): void {
    if (!(profile.classes & kind)) {
      profile.classes |= kind;
      profile.firstLineOfClass.set(kind, line);
    }
  }
}

/**
 * The first pass over a file: checks the header and the shape of every row (a row with too few
 * or too many fields is 400 naming its line) and infers each column's type. Nothing is kept but
 * counters, so memory does not grow with the file.
 */
export async function profileCsv(csv: CsvFile): Promise<CsvProfile> {
  const sink = new ProfileSink();
  await scanCsv(csv.path, csv.dialect, sink);
  const { header, columns, rows, problems } = sink;
  if (!header) throw new BadRequestError('The file is empty: a CSV file needs a header row.', 'INVALID_CSV', [{ path: 'line 1', message: 'no header row' }]);
  if (problems.length > 0) {
    throw new BadRequestError(`The CSV has rows of the wrong length: ${problems.slice(0, 3).map((problem) => problem.message).join('; ')}${problems.length > 3 ? '; …' : ''}.`, 'INVALID_CSV', problems);
  }
  if (rows === 0) {
    throw new BadRequestError('The file has a header row but no data rows: nothing to load.', 'INVALID_CSV', [{ path: 'line 2', message: 'no data rows' }]);
  }
  for (const column of columns) column.type = typeOfClasses(column.classes);
  return { header, columns, rows };
}

export const VALUE_CLASSES = [IS_INTEGER, IS_DOUBLE, IS_BOOLEAN, IS_STRING] as const;
export const CLASS_NAMES: Record<number, string> = { [IS_INTEGER]: 'an integer', [IS_DOUBLE]: 'a decimal number', [IS_BOOLEAN]: 'a boolean', [IS_STRING]: 'text' };
