import { BadRequestError } from '../errors/bad-request-error.js';
import { classify, CLASS_NAMES, IS_DOUBLE, IS_INTEGER, stringCapacity, type ColumnSpec } from './column-types.js';
import { isBlankRecord, type CsvFile } from './csv-file.js';

/**
 * A cell as its column holds it, ready for either load path of the store: `null` for an empty
 * cell; INTEGER and DOUBLE as their validated digits (`1.` becomes `1.0`); BOOLEAN as `1` or `0`;
 * STRING as written. Values only ever reach SQL as bound parameters or escaped `LOAD DATA` fields
 * (internal-data-store.ts), never as SQL text.
 */
export type CellValue = string | null;

const BOOLEAN_TEXT = /^(?:true|false)$/i;

export function rowWidthMessage(line: number, fields: number, width: number): string {
  return `line ${line} has ${fields} field${fields === 1 ? '' : 's'}, the header has ${width}`;
}

/** 400 INVALID_CSV for one row; `column` counts from 1, in file order. */
function invalidRow(message: string, line: number, column?: number): BadRequestError {
  return new BadRequestError(`The CSV cannot be loaded: ${message}.`, 'INVALID_CSV', [
    { path: `line ${line}`, line, message, ...(column ? { column } : {}) },
  ]);
}

/**
 * The ONE encoder of CSV records for both load paths (LOAD DATA LOCAL INFILE and the multi-row
 * INSERT fallback). Whatever the first pass concluded, every row is checked here again, right
 * before it is written: its width against the header, and each value against its column's type and
 * size. A row that fails is 400 INVALID_CSV naming its line (and column), so a value can never
 * reach the database as anything but what its column holds.
 */
export class RowEncoder {
  private readonly types: string[];
  private readonly capacities: number[];

  constructor(private readonly columns: readonly ColumnSpec[]) {
    this.types = columns.map((column) => column.type);
    this.capacities = columns.map((column) => (column.type === 'STRING' ? stringCapacity(column.sqlType) : 0));
  }

  /** The cells of one data record (`line` counts records, the header is line 1). */
  encode(record: readonly string[], line: number): CellValue[] {
    return this.encodeInPlace([...record], line);
  }

  /** `encode`, writing the cells over the record's own fields (no array per row on the hot path). */
  encodeInPlace(record: CellValue[], line: number): CellValue[] {
    const width = this.types.length;
    if (record.length !== width) throw invalidRow(rowWidthMessage(line, record.length, width), line);
    for (let index = 0; index < width; index += 1) record[index] = this.cell(record[index] as string, index, line);
    return record;
  }

  private cell(text: string, index: number, line: number): CellValue {
    if (text === '') return null;
    switch (this.types[index]) {
      case 'INTEGER':
        if (classify(text) === IS_INTEGER) return text;
        break;
      case 'DOUBLE': {
        const kind = classify(text);
        if (kind === IS_INTEGER) return text;
        if (kind === IS_DOUBLE) return text.charCodeAt(text.length - 1) === 46 ? `${text}0` : text; // `1.` → `1.0`
        break;
      }
      case 'BOOLEAN':
        if (BOOLEAN_TEXT.test(text)) return text.length === 4 ? '1' : '0';
        break;
      default: {
        const capacity = this.capacities[index];
        if (text.length <= capacity) return text;
        throw invalidRow(
          `line ${line}: column "${this.columns[index].name}" holds at most ${capacity} characters but the value has ${text.length}`,
          line,
          index + 1,
        );
      }
    }
    const { name, type } = this.columns[index];
    throw invalidRow(
      `line ${line}: column "${name}" is ${type} but the value is ${CLASS_NAMES[classify(text)]}`,
      line,
      index + 1,
    );
  }
}

/**
 * The data rows of `csv` (its header and blank lines skipped), read with the one tokenizer of every
 * pass (papaparse, csv-file.ts) and encoded for `columns` (the table columns in file order), in
 * batches of one chunk of the file each.
 */
export async function* encodedRows(csv: CsvFile, columns: readonly ColumnSpec[]): AsyncGenerator<CellValue[][]> {
  const encoder = new RowEncoder(columns);
  let headerSeen = false;
  for await (const { records, firstLine } of csv.batches()) {
    const rows: CellValue[][] = [];
    for (let index = 0; index < records.length; index += 1) {
      const record = records[index];
      if (isBlankRecord(record)) continue;
      // The header is the first non-blank record, as in the first pass.
      if (!headerSeen) {
        headerSeen = true;
        continue;
      }
      // papaparse's arrays are ours: each becomes the row's cells.
      rows.push(encoder.encodeInPlace(record, firstLine + index));
    }
    if (rows.length > 0) yield rows;
  }
}
