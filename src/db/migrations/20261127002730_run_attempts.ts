import type { Knex } from 'knex';

/**
 * How many times an async run, and a batch part, was started (docs/execution.md, "Recovery"): work
 * whose worker dies with it, or whose job fails for good, is taken over or queued again; past
 * RUN_MAX_ATTEMPTS starts it ends FAILED with RUN_ABANDONED instead of being tried for ever. Existing
 * rows start at 0.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('run_results', (table) => {
    table.smallint('attempts').unsigned().notNullable().defaultTo(0);
  });
  await db.schema.alterTable('batch_chunks', (table) => {
    table.smallint('attempts').unsigned().notNullable().defaultTo(0);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('batch_chunks', (table) => {
    table.dropColumn('attempts');
  });
  await db.schema.alterTable('run_results', (table) => {
    table.dropColumn('attempts');
  });
}
