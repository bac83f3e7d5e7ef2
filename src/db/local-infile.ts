import type { Readable } from 'node:stream';
import type { Knex } from 'knex';
import { ER_CLIENT_LOCAL_FILES_DISABLED, ER_NOT_ALLOWED_COMMAND, mysqlErrno } from './mysql-errors.js';

/**
 * `LOAD DATA LOCAL INFILE`, the fastest way into a table (the client streams rows in a simple text
 * format; the server parses far less than multi-row INSERTs): used by collection loads
 * (src/internal-data/). Every load of this service uses
 * LOAD_DATA_FORMAT:
 *
 * - one row per line, ended by `\n`; fields separated by a tab;
 * - NULL is `\N`; every other value is escaped with a backslash (escapeLoadDataValue): `\\`, `\t`,
 *   `\n`, `\r`, `\0`, so a value can hold tabs, line breaks, backslashes and the text `\N`, and can
 *   never end a field or a row.
 *
 * With LOCAL the server does not stop at a bad row: a duplicate key is skipped and a value that does
 * not convert is changed, each with a warning; callers check `affectedRows` and `warnings`.
 */
export const LOAD_DATA_FORMAT =
  'CHARACTER SET utf8mb4 FIELDS TERMINATED BY 0x09 ESCAPED BY 0x5c LINES TERMINATED BY 0x0a';
// (Hex literals: the same bytes whatever the session's sql_mode says about backslashes in quotes.)

const NEEDS_ESCAPE = /[\\\t\n\r\0]/;
const ESCAPABLE = /[\\\t\n\r\0]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

export function escapeLoadDataValue(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(ESCAPABLE, (char) => ESCAPES[char]) : value;
}

/** A warning the server reported about a load (SHOW WARNINGS). */
interface LoadWarning {
  code: number;
  message: string;
}

/** What `LOAD DATA` answered: rows written, warnings, and the first `warningsShown` of them. */
export interface LocalLoadResult {
  affectedRows: number;
  warnings: number;
  shown: LoadWarning[];
}

/** The parts of a raw mysql2 connection (callback API) a load uses. */
interface RawConnection {
  query(
    options: { sql: string; infileStreamFactory?: () => Readable },
    callback: (error: Error | null, result: unknown) => void,
  ): void;
  destroy(): void;
}
interface PoolClient {
  acquireConnection(): Promise<RawConnection>;
  releaseConnection(connection: RawConnection): Promise<unknown>;
}

function rawQuery(
  connection: RawConnection,
  options: { sql: string; infileStreamFactory?: () => Readable },
): Promise<unknown> {
  return new Promise((resolve, reject) =>
    connection.query(options, (error, result) => (error ? reject(error) : resolve(result))),
  );
}

/**
 * Runs `sql`, a `LOAD DATA LOCAL INFILE` statement, on a pooled connection of its own (autocommit),
 * with `file()` as the file: whatever name the server asks for, it gets that stream; no path of
 * the server's or the client's file system is ever read. An error of the stream fails the statement.
 */
export async function loadLocalInfile(
  db: Knex,
  sql: string,
  file: () => Readable,
  warningsShown = 3,
): Promise<LocalLoadResult> {
  const client = db.client as unknown as PoolClient;
  let connection: RawConnection | undefined;
  let failed = true;
  try {
    connection = await client.acquireConnection();
    const result = (await rawQuery(connection, { sql, infileStreamFactory: file })) as {
      affectedRows: number;
      warningStatus?: number;
    };
    const warnings = Number(result.warningStatus ?? 0);
    let shown: LoadWarning[] = [];
    if (warnings > 0) {
      const rows = (await rawQuery(connection, {
        sql: `SHOW WARNINGS LIMIT ${Math.max(1, Math.floor(warningsShown))}`,
      })) as Array<{ Code: number; Message: string }>;
      shown = rows.map((row) => ({ code: Number(row.Code), message: row.Message }));
    }
    failed = false;
    return { affectedRows: Number(result.affectedRows), warnings, shown };
  } finally {
    if (connection) {
      // After a failed LOAD the connection may still hold the stream's listeners or be mid-protocol:
      // closed, so the pool's validation drops it instead of handing it out again.
      if (failed) connection.destroy();
      await client.releaseConnection(connection);
    }
  }
}

/** Whether the server accepts `LOAD DATA LOCAL INFILE` (MySQL 8 turns `local_infile` off by default). */
export async function localInfileEnabled(db: Knex): Promise<boolean> {
  const [rows] = (await db.raw('SELECT @@local_infile AS enabled')) as [Array<{ enabled: number | string }>, unknown];
  return Number(rows[0]?.enabled) === 1;
}

/** The server (or its `local_infile` setting) refused LOAD DATA LOCAL INFILE: nothing was read. */
export function localInfileRefused(error: unknown): boolean {
  const errno = mysqlErrno(error);
  return errno === ER_NOT_ALLOWED_COMMAND || errno === ER_CLIENT_LOCAL_FILES_DISABLED;
}
