import type { Knex } from 'knex';
import { retryOnDeadlock } from '../db/deadlock-retry.js';
import { ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT, isDatabaseUnavailable, mysqlErrno } from '../db/mysql-errors.js';
import type { SqlValue } from '../db/sql-literals.js';
import { insertedWithoutDuplicates } from '../db/insert-duplicates.js';
import { sendStatement, type StatementAnswer } from '../db/send-statement.js';
import { groupsWithin } from '../db/statement-groups.js';
import type { RunOutcome } from './run-outcome.js';
import { finishedRunValues, insertFinishedRuns, type RunIdentity } from './run-columns.js';
import { databaseErrorReason, replacementOutcome } from './stored-outcome.js';

export interface FinishedRun {
  run: RunIdentity;
  outcome: RunOutcome;
}

/**
 * Most SQL text one statement of finished runs carries (as values' sizes estimate it): outcomes go as
 * hexadecimal literals, twice their bytes, and a statement must stay below max_allowed_packet (16 MiB
 * by default on MariaDB). A run's result keeps at most 4 MiB (stored-outcome.ts), so one run always fits.
 */
const STATEMENT_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Writes finished runs with multi-row statements (`onDuplicate` says what a row stored already
 * becomes), in id order (as every multi-row write of run_results, against deadlocks), each statement
 * within STATEMENT_MAX_BYTES. Answers, per run in the order given, null when its row was written, or
 * the error its write failed with.
 *
 * One bad row must not take the others with it: a statement the database refuses for what it holds
 * is written again run by run, and a run whose own row is refused is stored as FAILED with
 * RESULT_NOT_STORED and the database's reason (replacementOutcome), so that it ends too. Only when
 * that row is refused as well is the run's answer an error. An outage (isDatabaseUnavailable) or a
 * lock that could not be had says nothing about the rows: it is thrown, and the job is tried again.
 * `db` may be a transaction (the runs' decision records are written in it too): a refused statement
 * is undone alone by MySQL, so the fallbacks work the same inside one.
 *
 * `allNew` is true when every run's row was inserted as a new row by this call (each statement's answer
 * said so, insert-duplicates.ts): a caller that must know which rows it stored need not read them back.
 * False says nothing either way (a duplicate key, a statement of one row, a fallback).
 */
export async function writeFinishedRuns(
  db: Knex,
  finished: readonly FinishedRun[],
  onDuplicate: string,
): Promise<{ errors: Array<Error | null>; allNew: boolean }> {
  const answers = new Array<Error | null>(finished.length).fill(null);
  let allNew = true;
  const order = finished.map((_, index) => index).sort((a, b) => compareIds(finished[a].run.id, finished[b].run.id));
  const rows = order.map((index) => ({
    index,
    values: finishedRunValues(finished[index].run, finished[index].outcome),
  }));
  for (const statement of groupsWithin(rows, (row) => estimatedBytes(row.values), STATEMENT_MAX_BYTES)) {
    try {
      const answer = await write(
        db,
        statement.map((row) => row.values),
        onDuplicate,
      );
      allNew &&= insertedWithoutDuplicates(answer);
      continue;
    } catch (error) {
      allNew = false;
      if (!isRowFault(error)) throw error;
      if (statement.length === 1) {
        answers[statement[0].index] = await writeReplacement(db, finished[statement[0].index], error, onDuplicate);
        continue;
      }
    }
    for (const row of statement) {
      try {
        await write(db, [row.values], onDuplicate);
      } catch (error) {
        if (!isRowFault(error)) throw error;
        answers[row.index] = await writeReplacement(db, finished[row.index], error, onDuplicate);
      }
    }
  }
  return { errors: answers, allNew };
}

async function write(db: Knex, rows: SqlValue[][], onDuplicate: string): Promise<StatementAnswer> {
  const sql = insertFinishedRuns(rows, onDuplicate);
  // A deadlock rolls back a whole transaction: within one, the caller tries the transaction again, never a statement.
  if ((db as Knex.Transaction).isTransaction) return await sendStatement(db, sql);
  return await retryOnDeadlock(() => sendStatement(db, sql));
}

/** Stores RESULT_NOT_STORED for a run whose row was refused; answers null, or the error when that row is refused too. */
async function writeReplacement(
  db: Knex,
  { run, outcome }: FinishedRun,
  refusal: unknown,
  onDuplicate: string,
): Promise<Error | null> {
  const reason = databaseErrorReason(refusal);
  try {
    await write(db, [finishedRunValues(run, replacementOutcome(outcome, reason))], onDuplicate);
    return null;
  } catch (error) {
    if (!isRowFault(error)) throw error;
    return new Error(
      `The outcome of run ${run.id} could not be stored (${reason}), nor its replacement (${databaseErrorReason(error)})`,
    );
  }
}

/** The database refused the statement for what it holds (not an outage, not a lock it could not get). */
function isRowFault(error: unknown): boolean {
  const errno = mysqlErrno(error);
  return !isDatabaseUnavailable(error) && errno !== ER_LOCK_DEADLOCK && errno !== ER_LOCK_WAIT_TIMEOUT;
}

/**
 * About how many bytes of SQL a row's values make (strings as hexadecimal literals, the worst case). A short string
 * counts 3 bytes a UTF-16 unit (the most UTF-8 takes for one) instead of being measured: a pass over every value of
 * every row, for statements whose bound only matters with values of megabytes.
 */
function estimatedBytes(values: SqlValue[]): number {
  let bytes = 16;
  for (const value of values) {
    if (typeof value !== 'string') bytes += 24;
    else bytes += (value.length <= SHORT_STRING ? 3 * value.length : Buffer.byteLength(value, 'utf8')) * 2 + 4;
  }
  return bytes;
}

/** Strings up to this many UTF-16 units are estimated, not measured (estimatedBytes). */
const SHORT_STRING = 4096;

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
