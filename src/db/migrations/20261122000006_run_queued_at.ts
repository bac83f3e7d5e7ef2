import type { Knex } from 'knex';

/**
 * When a run (async run or batch element) was last queued. The stalled-work sweeper finds QUEUED
 * runs whose job was never saved (the API process died between committing them and enqueueing)
 * by this time, and claims them by moving it, so concurrent sweepers queue each only once.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('run_results', (table) => {
    table.timestamp('queued_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.index(['state', 'queued_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('run_results', (table) => {
    table.dropIndex(['state', 'queued_at']);
    table.dropColumn('queued_at');
  });
}
