import * as mariadb from 'mariadb';
import { isPacketTooLarge } from './mysql-errors.js';

/** What one bulk insert answered. */
export interface BulkInsertResult {
  affectedRows: number;
  warnings: number;
}

/** Sends one INSERT with many rows of values (`?` placeholders, one array of values per row). */
export interface BulkInserter {
  /** Resolves undefined when the server cannot take bulk inserts (not MariaDB): the caller writes another way. */
  insert(sql: string, rows: unknown[][]): Promise<BulkInsertResult | undefined>;
  close(): Promise<void>;
}

/**
 * MariaDB's bulk protocol (COM_STMT_BULK_EXECUTE), through MariaDB's own connector: the statement is
 * prepared once and every row's values follow in binary, each string with its length. The server
 * neither parses SQL text per row (multi-row INSERTs) nor reads fields character by character
 * (`LOAD DATA`): measured on decision records when they were a row each, about a quarter less
 * database CPU per row than LOAD DATA LOCAL INFILE (docs/benchmarks.md); their pages now go this way. mysql2, the driver behind knex, does not speak it, so
 * this keeps connections of its own (opened at the first insert, at most `connections` kept between
 * inserts); a server that is not MariaDB is found out then, and `insert` answers undefined from that
 * moment on.
 *
 * Only the URL's user, password, host, port and database are read: a DATABASE_URL with options (TLS
 * and the like, which mysql2 reads from its query string) is not used here, and `insert` answers
 * undefined, so that every write goes through the driver that honours them.
 */
export class MariaDbBulkInserter implements BulkInserter {
  /** Connections between inserts (at most `connections`): MariaDB's pool waits its whole acquire time-out on a refused connection, this fails at once. */
  private readonly idle: mariadb.Connection[] = [];
  private supported: boolean;
  private closed = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly connections: number,
  ) {
    this.supported = new URL(databaseUrl).search === '';
  }

  async insert(sql: string, rows: unknown[][]): Promise<BulkInsertResult | undefined> {
    if (!this.supported) return undefined;
    const connection = await this.acquire();
    let healthy = false;
    try {
      if (!connection.info?.serverVersion.mariaDb) {
        this.supported = false;
        return undefined;
      }
      const result = (await connection.batch(sql, rows)) as mariadb.UpsertResult;
      healthy = true;
      return { affectedRows: Number(result.affectedRows), warnings: Number(result.warningStatus) };
    } catch (error) {
      healthy = !(error as mariadb.SqlError).fatal;
      // Too large a packet closes the connection, but the server refused the statement, it is not down.
      throw healthy || isPacketTooLarge(error) ? error : unavailable(error);
    } finally {
      this.release(connection, healthy);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((connection) => connection.end().catch(() => connection.destroy())));
  }

  private async acquire(): Promise<mariadb.Connection> {
    for (let kept = this.idle.pop(); kept; kept = this.idle.pop()) {
      if (kept.isValid()) return kept;
      kept.destroy();
    }
    let connection: mariadb.Connection;
    try {
      connection = await mariadb.createConnection(this.options());
    } catch (error) {
      throw unavailable(error);
    }
    // Closed by the server while kept (or broken mid-insert): dropped, never an uncaught 'error' event.
    connection.on('error', () => connection.destroy());
    return connection;
  }

  private release(connection: mariadb.Connection, healthy: boolean): void {
    if (healthy && !this.closed && connection.isValid() && this.idle.length < this.connections) {
      this.idle.push(connection);
      return;
    }
    connection.end().catch(() => connection.destroy());
  }

  private options(): mariadb.ConnectionConfig {
    const url = new URL(this.databaseUrl);
    return {
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: decodeURIComponent(url.pathname.replace(/^\//, '')),
      connectTimeout: 5_000,
    };
  }
}

/** A connection failure, marked as mysql2 marks its own (`fatal`), so that isDatabaseUnavailable knows it. */
function unavailable(error: unknown): Error {
  const failure = error instanceof Error ? error : new Error(String(error));
  Object.assign(failure, { fatal: true });
  return failure;
}
