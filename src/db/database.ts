import knex, { type Knex } from 'knex';
import { format } from 'mysql2';
import { StaticMigrationSource } from './migration-source.js';

export function knexConfig(databaseUrl: string, pool = { min: 0, max: 20 }, quiet = false): Knex.Config {
  return {
    // quiet: no console output from knex (the start-up check reports failures in one line of its own)
    ...(quiet ? { log: { warn() {}, error() {}, deprecate() {}, debug() {} } } : {}),
    client: 'mysql2',
    connection: {
      uri: databaseUrl,
      // Large integers (row counts, ids) stay exact; DECIMALs are not used.
      supportBigNumbers: true,
      dateStrings: false,
      timezone: 'Z',
      queryFormat: formatQuery,
      // Collection loads use LOAD DATA LOCAL INFILE (src/internal-data/) when the server allows it.
    } as unknown as Knex.MySql2ConnectionConfig,
    pool,
    migrations: { migrationSource: new StaticMigrationSource(), tableName: 'knex_migrations' },
  };
}

/**
 * How mysql2 turns a statement and its values into SQL text: as it does by default, except that a
 * statement without values is sent as written. (mysql2 scans every statement for placeholders, even
 * with no values to put in, and the scan of the multi-row inserts built as text by sql-literals.ts,
 * megabytes each, cost more CPU than building them.) With no values the scan never replaces anything,
 * so nothing else changes. `this.config` is the connection's configuration.
 */
function formatQuery(
  this: { config: { stringifyObjects?: boolean } },
  sql: string,
  values: unknown,
  timezone: string,
): string {
  if (values === undefined || values === null || (Array.isArray(values) && values.length === 0)) return sql;
  return format(
    sql,
    values as Parameters<typeof format>[1],
    this.config.stringifyObjects ?? false,
    timezone as Parameters<typeof format>[3],
  );
}

export function createDatabase(databaseUrl: string, pool?: { min: number; max: number }, quiet = false): Knex {
  return knex(knexConfig(databaseUrl, pool, quiet));
}

/** Creates the database named in the URL when it does not exist yet (local and test set-ups). */
export async function ensureDatabaseExists(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) throw new Error(`DATABASE_URL names an invalid database "${name}"`);
  url.pathname = '/';
  const admin = createDatabase(url.toString(), { min: 0, max: 1 });
  try {
    await admin.raw('CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_bin', [name]);
  } finally {
    await admin.destroy();
  }
}

export async function migrateToLatest(db: Knex): Promise<void> {
  await db.migrate.latest();
}

/** Whether MySQL answers a `SELECT 1` within `timeoutMs` (a query that fails or is late: no). */
export async function databaseAnswers(db: Knex, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      db.raw('SELECT 1').then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
