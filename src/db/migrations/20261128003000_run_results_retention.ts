import type { Knex } from 'knex';

/**
 * An index for the retention of finished async runs (src/execution/run-retention-sweeper.ts): the sweeper deletes
 * the oldest finished async runs (batch_id NULL) by their finish time, in short statements; without the index each
 * statement would scan the table. (Batches by finish time use `batches.finished_at`'s index of migration
 * 20261123000160.)
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('run_results', (table) => {
    table.index(['batch_id', 'finished_at'], 'run_results_batch_id_finished_at_index');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('run_results', (table) => {
    table.dropIndex(['batch_id', 'finished_at'], 'run_results_batch_id_finished_at_index');
  });
}
