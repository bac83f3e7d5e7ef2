import type { Knex } from 'knex';

/**
 * The stalled-work sweeper looks every few seconds (docs/execution.md, "Recovery"): for unfinished batch
 * parts, started or not (a worker that died running one, its job lost with the job store), and for
 * finished runs whose callback is still PENDING (a delivery whose job was lost). Both by an index,
 * never a scan of every part or every run ever stored.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('batch_chunks', (table) => {
    table.index(['finished_at', 'queued_at'], 'batch_chunks_unfinished');
  });
  await db.schema.alterTable('run_results', (table) => {
    table.index(['callback_state', 'queued_at'], 'run_results_callback_pending');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('run_results', (table) => {
    table.dropIndex(['callback_state', 'queued_at'], 'run_results_callback_pending');
  });
  await db.schema.alterTable('batch_chunks', (table) => {
    table.dropIndex(['finished_at', 'queued_at'], 'batch_chunks_unfinished');
  });
}
