import type { Knex } from 'knex';

/** What the driver answers a statement that returns no rows with (mysql2's ResultSetHeader). */
export interface StatementAnswer {
  affectedRows: number;
  /** The server's info text: `Records: N  Duplicates: D  Warnings: W` after a multi-row INSERT. */
  info: string;
}

interface DriverConnection {
  query(sql: string, callback: (error: Error | null, answer: StatementAnswer) => void): void;
}

interface ConnectionSource {
  acquireConnection(): Promise<DriverConnection>;
  releaseConnection(connection: DriverConnection): Promise<unknown>;
}

/**
 * Sends one statement written as SQL text without placeholders (src/db/sql-literals.ts: the multi-row writes of
 * batches and stored runs, up to megabytes each) straight to the driver, on the connection knex would use: the
 * transaction's when `db` is one, else one of the pool's, given back after. Going through knex costs CPU that grows
 * with the statement's length whatever it holds: knex copies every statement for its debug output
 * (`sql.replace(/%/g, '%%')`, debugging on or off) and scans it for bindings. The driver's own handling stays
 * (database.ts sends a statement without values as written), and so do its errors (errno, sqlMessage): a fatal
 * one marks the connection for knex to discard, as any query's does.
 */
export async function sendStatement(db: Knex, sql: string): Promise<StatementAnswer> {
  // A transaction's client answers its own connection; the pool's answers one of the pool's.
  const client = (db as unknown as { client: ConnectionSource }).client;
  const connection = await client.acquireConnection();
  try {
    return await new Promise<StatementAnswer>((resolve, reject) => {
      connection.query(sql, (error, answer) => (error ? reject(error) : resolve(answer)));
    });
  } finally {
    await client.releaseConnection(connection);
  }
}
