import type { Knex } from 'knex';

/**
 * The bytes of a stored page's records (`body`), written with the page: a list reads the sizes of the
 * next pages first and then only as many pages as fit its bound, so no query loads more than that
 * into the process, whatever a scenario's pages hold (small pages followed by pages of 8 MiB records
 * must not be read 500 at a time). Existing pages are measured once here.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('decision_record_pages', (table) => {
    table.integer('bytes').unsigned().nullable();
  });
  await db.raw('UPDATE decision_record_pages SET bytes = LENGTH(body) WHERE bytes IS NULL');
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('decision_record_pages', (table) => {
    table.dropColumn('bytes');
  });
}
