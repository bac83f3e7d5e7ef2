import type { Knex } from 'knex';
import { StaticMigrationSource } from './migration-source.js';

/**
 * The migrations this code needs that the database has not applied, in order (read-only: knex's own listing would
 * create its table). Migrations the database has and this code does not know (newer code migrated it) are not
 * counted: they do not keep this code from working.
 */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  const known = await new StaticMigrationSource().getMigrations();
  if (!(await db.schema.hasTable('knex_migrations'))) return known;
  const applied = new Set(
    ((await db('knex_migrations').select('name')) as Array<{ name: string }>).map((row) => row.name),
  );
  return known.filter((name) => !applied.has(name));
}

/** One line naming what is missing and the fix, or undefined when nothing is. */
export function migrationProblem(pending: readonly string[]): string | undefined {
  if (pending.length === 0) return undefined;
  return `not migrated (${pending.length} migration${pending.length === 1 ? '' : 's'} not applied, from ${pending[0]}): run npm run migrate`;
}
