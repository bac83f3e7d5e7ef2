import type { Knex } from 'knex';

/**
 * Characters of JSON a decision record holds (inputs, result, error and captures), written with the
 * record: a page of records is bounded by it (RECORDS_PAGE_MAX_CHARS, docs/records.md) without the
 * database reading every candidate's values to measure them. Null on records written before; the
 * store measures those with LENGTH().
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('decision_records', (table) => {
    table.integer('json_chars').unsigned().nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('decision_records', (table) => {
    table.dropColumn('json_chars');
  });
}
