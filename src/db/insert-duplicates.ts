import type { StatementAnswer } from './send-statement.js';

/**
 * Whether a multi-row `INSERT … ON DUPLICATE KEY UPDATE` stored every row as a new one, read from what the
 * server answers it with (sendStatement's answer). Its affected-row count cannot tell: the driver
 * connects with CLIENT_FOUND_ROWS, so a row that met a duplicate key counts 1 as a new row does. The OK packet's
 * info text can: MySQL and MariaDB answer a statement of several rows with `Records: N  Duplicates: D  Warnings: W`.
 * A statement of one row gets no such text, nor does anything else: false, so the caller reads what was stored.
 */
export function insertedWithoutDuplicates(answer: StatementAnswer): boolean {
  if (typeof answer.info !== 'string') return false;
  const found = DUPLICATES.exec(answer.info);
  return found !== null && found[1] === '0';
}

const DUPLICATES = /^Records: \d+ +Duplicates: (\d+) /;
