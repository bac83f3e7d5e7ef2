import type { Knex } from 'knex';

/**
 * Retention of live tests' runs (issue 32, docs/live-tests.md): `shadow_runs` and `split_runs` grew without
 * bound. The retention sweep deletes the runs stored before a cutoff, oldest first, in short statements: an
 * index on `created_at` finds them without reading the tables.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('shadow_runs', (table) => {
    table.index(['created_at'], 'shadow_runs_created_at');
  });
  await db.schema.alterTable('split_runs', (table) => {
    table.index(['created_at'], 'split_runs_created_at');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('split_runs', (table) => {
    table.dropIndex(['created_at'], 'split_runs_created_at');
  });
  await db.schema.alterTable('shadow_runs', (table) => {
    table.dropIndex(['created_at'], 'shadow_runs_created_at');
  });
}
