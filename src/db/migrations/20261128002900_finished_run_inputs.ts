import type { Knex } from 'knex';

/** DDL-free, but long: the rows are changed in statements of at most ROWS_PER_STATEMENT, each committed on its own. */
export const config = { transaction: false };

const ROWS_PER_STATEMENT = 5000;

/**
 * Inputs of finished runs are no longer kept (they may hold personal data and nothing reads them once the run
 * has finished): from now on a finished async run's `run_results.input` is set to NULL with its outcome, and a
 * finished part's `batch_chunks.inputs` to `[]`. This removes those kept before, in bounded statements so a large
 * table is never held long. Not reversible: `down` leaves them removed.
 */
export async function up(db: Knex): Promise<void> {
  for (;;) {
    const changed = await db('run_results')
      .whereIn('state', ['SUCCEEDED', 'FAILED'])
      .whereNotNull('input')
      .limit(ROWS_PER_STATEMENT)
      .update({ input: null });
    if (changed < ROWS_PER_STATEMENT) break;
  }
  for (;;) {
    const changed = await db('batch_chunks')
      .whereNotNull('finished_at')
      .whereNot('inputs', '[]')
      .limit(ROWS_PER_STATEMENT)
      .update({ inputs: '[]' });
    if (changed < ROWS_PER_STATEMENT) break;
  }
}

export async function down(): Promise<void> {
  // The removed inputs cannot come back.
}
