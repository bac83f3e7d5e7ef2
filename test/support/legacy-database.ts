import type { Knex } from 'knex';
import { createDatabase } from '../../src/db/database.js';
import { StaticMigrationSource } from '../../src/db/migration-source.js';
import { applyTestEnvironment } from './test-environment.js';

/**
 * A scratch database next to the test database, created the way an operator may have created one
 * (with the server's or a given collation, not by `npm run migrate`) and migrated up to and
 * including `upTo` (every migration when omitted): for tests of migrations and of what they fix.
 */
export interface LegacyDatabase {
  url: string;
  db: Knex;
  /** Applies the remaining migrations. */
  migrateToLatest(): Promise<void>;
  drop(): Promise<void>;
}

export async function createLegacyDatabase(suffix: string, collation: string, upTo?: string): Promise<LegacyDatabase> {
  applyTestEnvironment();
  const base = new URL(process.env.DATABASE_URL as string);
  const name = `${base.pathname.slice(1)}_${suffix}`;
  const server = new URL(base);
  server.pathname = '/';
  const admin = createDatabase(server.toString(), { min: 0, max: 1 });
  await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
  await admin.raw(`CREATE DATABASE ?? CHARACTER SET utf8mb4 COLLATE ${collation}`, [name]);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = createDatabase(url.toString(), { min: 0, max: 2 });
  const names = await new StaticMigrationSource().getMigrations();
  for (const migration of upTo ? names.slice(0, names.indexOf(upTo) + 1) : names)
    await db.migrate.up({ name: migration });
  return {
    url: url.toString(),
    db,
    migrateToLatest: async () => void (await db.migrate.latest()),
    async drop() {
      await db.destroy();
      await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
      await admin.destroy();
    },
  };
}
