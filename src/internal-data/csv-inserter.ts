import type { ColumnType } from './column-types.js';
import { sqlLiteral } from './column-types.js';
import type { CsvFile } from './csv-file.js';
import { isBlankRecord } from './csv-profile.js';

/** How the second pass sends rows: tunable for the benchmark (`docs/benchmarks.md`). */
export interface InsertTuning {
  /** Rows per multi-row INSERT. */
  rowsPerInsert: number;
  /** A statement is sent early once its text reaches this size (stays under `max_allowed_packet`). */
  maxStatementBytes: number;
  /** INSERTs in flight at once (new collections only; appends run in one transaction, one at a time). */
  parallelism: number;
  /**
   * Load through `LOAD DATA LOCAL INFILE` when the server allows it (`@@local_infile`); false always
   * takes the multi-row INSERT path below (the fallback; tests force it with this).
   */
  localInfile: boolean;
}

export const DEFAULT_INSERT_TUNING: InsertTuning = { rowsPerInsert: 2000, maxStatementBytes: 4 << 20, parallelism: 2, localInfile: true };

export interface InsertPlan {
  /** `INSERT INTO … (_row_id, c1, c2, …) VALUES ` with the columns in file order. */
  prefix: string;
  /** The table type of each file column, in file order. */
  types: ColumnType[];
  /** `_row_id` of the first data row; the following rows count up from it (load order). */
  firstRowId: number;
}

/**
 * The second pass of the fallback path (used when `LOAD DATA LOCAL INFILE` is not available): streams the file again and sends its data rows as multi-row INSERTs through
 * `run`, with at most `parallelism` statements in flight while the next one is being built. The
 * first failure stops the pass (statements in flight are awaited) and is thrown.
 */
export async function insertCsvRows(csv: CsvFile, plan: InsertPlan, run: (sql: string) => Promise<void>, tuning: InsertTuning): Promise<number> {
  const { types } = plan;
  const width = types.length;
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let rowId = plan.firstRowId;
  let statement = plan.prefix;
  let rowsInStatement = 0;
  let headerSeen = false;

  const dispatch = async (sql: string): Promise<void> => {
    while (inFlight.size >= tuning.parallelism) await Promise.race(inFlight);
    if (failure) throw failure.error;
    const sent: Promise<void> = run(sql)
      .catch((error: unknown) => { failure ??= { error }; })
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
  };

  try {
    for await (const { records } of csv.batches()) {
      for (let index = 0; index < records.length; index += 1) {
        const record = records[index];
        if (isBlankRecord(record)) continue;
        // The header is the first non-blank record, as in the first pass.
        if (!headerSeen) {
          headerSeen = true;
          continue;
        }
        let tuple = rowsInStatement === 0 ? `(${rowId}` : `,(${rowId}`;
        for (let column = 0; column < width; column += 1) tuple += `,${sqlLiteral(record[column], types[column])}`;
        statement += `${tuple})`;
        rowId += 1;
        rowsInStatement += 1;
        if (rowsInStatement >= tuning.rowsPerInsert || statement.length >= tuning.maxStatementBytes) {
          await dispatch(statement);
          statement = plan.prefix;
          rowsInStatement = 0;
        }
      }
      if (failure) break;
    }
    if (rowsInStatement > 0 && !failure) await dispatch(statement);
  } finally {
    await Promise.all(inFlight);
  }
  if (failure) throw failure.error;
  return rowId - plan.firstRowId;
}
