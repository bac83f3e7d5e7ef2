import type { CellValue } from './row-encoder.js';

/** How the second pass sends rows: tunable for the benchmark (`docs/benchmarks.md`). */
export interface InsertTuning {
  /** Rows per multi-row INSERT. */
  rowsPerInsert: number;
  /** A statement is sent early once its values reach about this many characters (stays under `max_allowed_packet`). */
  maxStatementBytes: number;
  /** INSERTs in flight at once (new collections only; appends run in one transaction, one at a time). */
  parallelism: number;
  /**
   * Load through `LOAD DATA LOCAL INFILE` when the server allows it (`@@local_infile`); false always
   * takes the multi-row INSERT path below (the fallback; tests force it with this).
   */
  localInfile: boolean;
}

export const DEFAULT_INSERT_TUNING: InsertTuning = {
  rowsPerInsert: 2000,
  maxStatementBytes: 4 << 20,
  parallelism: 2,
  localInfile: true,
};

/** Sends one statement's rows, numbered from `firstRowId` (the store's `insertRows`). */
export type RowSender = (firstRowId: number, rows: CellValue[][]) => Promise<void>;

/**
 * The second pass of the fallback path (used when `LOAD DATA LOCAL INFILE` is not available):
 * groups the encoded rows (row-encoder.ts) into statements of `rowsPerInsert` rows (fewer when their
 * values grow past `maxStatementBytes`) and hands each to `send`, with at most `parallelism`
 * statements in flight while the next one is being gathered. The first failure (of the rows or of a
 * statement) stops the pass (statements in flight are awaited) and is thrown. Answers the rows sent.
 */
export async function insertRows(
  rows: AsyncIterable<CellValue[][]>,
  firstRowId: number,
  send: RowSender,
  tuning: InsertTuning,
): Promise<number> {
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let nextRowId = firstRowId;
  let statement: CellValue[][] = [];
  let statementChars = 0;

  const dispatch = async (): Promise<void> => {
    while (inFlight.size >= tuning.parallelism) await Promise.race(inFlight);
    if (failure) throw failure.error;
    const batch = statement;
    const sent: Promise<void> = send(nextRowId, batch)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
    nextRowId += batch.length;
    statement = [];
    statementChars = 0;
  };

  try {
    for await (const batch of rows) {
      for (const row of batch) {
        let chars = 0;
        for (const cell of row) chars += cell === null ? 4 : cell.length + 3;
        // A row that would push the statement past its size goes into the next one.
        if (statement.length > 0 && statementChars + chars >= tuning.maxStatementBytes) await dispatch();
        statement.push(row);
        statementChars += chars;
        if (statement.length >= tuning.rowsPerInsert) await dispatch();
      }
      if (failure) break;
    }
    if (statement.length > 0 && !failure) await dispatch();
  } finally {
    await Promise.all(inFlight);
  }
  if (failure) throw failure.error;
  return nextRowId - firstRowId;
}
