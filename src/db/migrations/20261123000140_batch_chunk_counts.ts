import type { Knex } from 'knex';

/**
 * A finished part of a batch keeps how many of its elements succeeded and failed, counted once when
 * it finishes: the batch status sums these instead of counting every stored result of the batch on
 * each call (a client polling a 10,000-element batch made MySQL count up to 10,000 rows per poll).
 * Parts finished before this migration are counted now.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('batch_chunks', (table) => {
    table.integer('succeeded').unsigned().notNullable().defaultTo(0);
    table.integer('failed').unsigned().notNullable().defaultTo(0);
  });
  await db.raw(`UPDATE batch_chunks AS c SET
      c.succeeded = (SELECT COUNT(*) FROM run_results AS r WHERE r.batch_id = c.batch_id AND r.element_index >= c.from_index AND r.element_index < c.to_index AND r.state = 'SUCCEEDED'),
      c.failed = (SELECT COUNT(*) FROM run_results AS r WHERE r.batch_id = c.batch_id AND r.element_index >= c.from_index AND r.element_index < c.to_index AND r.state = 'FAILED')
    WHERE c.finished_at IS NOT NULL`);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('batch_chunks', (table) => {
    table.dropColumn('succeeded');
    table.dropColumn('failed');
  });
}
