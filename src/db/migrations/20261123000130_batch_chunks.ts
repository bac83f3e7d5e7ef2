import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** DDL commits implicitly in MySQL: the schema steps run on their own, the data conversion in its own transaction. */
export const config = { transaction: false };

/** Elements per chunk row made from the unfinished elements of batches submitted before this migration. */
const LEGACY_CHUNK = 500;

/**
 * Batch inputs move out of run_results into batch_chunks: one row per range of elements holds
 * their inputs as one JSON array and the range's progress (queued, started, finished). A batch
 * element's run_results row is written once, when it finishes, by a multi-row insert; the unique
 * (batch_id, element_index) makes a second write of the same element (a chunk run twice) a no-op.
 * Unfinished elements of existing batches become chunk rows, so their jobs still find them.
 */
export async function up(db: Knex): Promise<void> {
  // A foreign key needs the referenced column's collation, whatever the database's default.
  const [[{ collation }]] = (await db.raw(
    "SELECT COLLATION_NAME AS collation FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'batches' AND COLUMN_NAME = 'id'",
  )) as [[{ collation: string }]];
  await db.schema.createTable('batch_chunks', (table) => {
    table.string('batch_id', 36).collate(collation).notNullable().references('batches.id').onDelete('CASCADE');
    table.integer('from_index').unsigned().notNullable();
    // Exclusive.
    table.integer('to_index').unsigned().notNullable();
    // JSON array: the inputs of elements from_index … to_index - 1.
    table.specificType('inputs', 'LONGTEXT').notNullable();
    table.timestamp('queued_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.timestamp('started_at', { precision: 3 }).nullable();
    table.timestamp('finished_at', { precision: 3 }).nullable();
    table.primary(['batch_id', 'from_index']);
    // The stalled-work sweeper looks for never-started chunks queued long ago.
    table.index(['started_at', 'queued_at']);
  });
  await db.schema.alterTable('run_results', (table) => {
    table.unique(['batch_id', 'element_index']);
  });
  await db.schema.alterTable('run_results', (table) => {
    table.dropIndex(['batch_id', 'element_index']);
  });

  const unfinished = (await db('run_results as r')
    .join('batches as b', 'b.id', 'r.batch_id')
    .whereNull('b.finished_at')
    .whereIn('r.state', ['QUEUED', 'RUNNING'])
    .orderBy(['r.batch_id', 'r.element_index'])
    .select('r.batch_id', 'r.element_index', 'r.input')) as Array<{
    batch_id: string;
    element_index: number;
    input: string | null;
  }>;
  const chunks: Array<{ batch_id: string; from_index: number; to_index: number; inputs: string }> = [];
  let current: { batch_id: string; from_index: number; to_index: number; inputs: string[] } | undefined;
  for (const row of unfinished) {
    const contiguous =
      current &&
      current.batch_id === row.batch_id &&
      current.to_index === row.element_index &&
      current.inputs.length < LEGACY_CHUNK;
    if (!contiguous) {
      if (current) chunks.push({ ...current, inputs: `[${current.inputs.join(',')}]` });
      current = { batch_id: row.batch_id, from_index: row.element_index, to_index: row.element_index, inputs: [] };
    }
    const chunk = current as { to_index: number; inputs: string[] };
    chunk.inputs.push(row.input ?? '{}');
    chunk.to_index = row.element_index + 1;
  }
  if (current) chunks.push({ ...current, inputs: `[${current.inputs.join(',')}]` });
  await db.transaction(async (trx) => {
    for (const chunk of chunks) await trx('batch_chunks').insert(chunk);
    if (unfinished.length > 0) {
      await trx('run_results')
        .whereIn('batch_id', [...new Set(unfinished.map((row) => row.batch_id))])
        .whereIn('state', ['QUEUED', 'RUNNING'])
        .delete();
    }
  });
}

export async function down(db: Knex): Promise<void> {
  // Unfinished elements go back to QUEUED run_results rows carrying their inputs.
  const chunks = (await db('batch_chunks as c')
    .join('batches as b', 'b.id', 'c.batch_id')
    .whereNull('c.finished_at')
    .select('c.batch_id', 'c.from_index', 'c.inputs', 'b.user_id', 'b.scenario_name')) as Array<{
    batch_id: string;
    from_index: number;
    inputs: string;
    user_id: number;
    scenario_name: string;
  }>;
  for (const chunk of chunks) {
    const written = new Set(
      (
        (await db('run_results').where('batch_id', chunk.batch_id).select('element_index')) as Array<{
          element_index: number;
        }>
      ).map((row) => row.element_index),
    );
    const inputs = JSON.parse(chunk.inputs) as unknown[];
    const rows = inputs
      .map((input, offset) => ({ index: chunk.from_index + offset, input }))
      .filter((element) => !written.has(element.index))
      .map((element) => {
        const id = randomUUID();
        return {
          id,
          user_id: chunk.user_id,
          request_id: id,
          scenario_name: chunk.scenario_name,
          batch_id: chunk.batch_id,
          element_index: element.index,
          state: 'QUEUED',
          input: JSON.stringify(element.input),
        };
      });
    for (let start = 0; start < rows.length; start += 1000)
      await db('run_results').insert(rows.slice(start, start + 1000));
  }
  await db.schema.alterTable('run_results', (table) => {
    table.index(['batch_id', 'element_index']);
  });
  await db.schema.alterTable('run_results', (table) => {
    table.dropUnique(['batch_id', 'element_index']);
  });
  await db.schema.dropTable('batch_chunks');
}
