import type { Knex } from 'knex';

/** The failed run's RunError beyond code and message (node id/name/type, input violations), as JSON. */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('run_results', (table) => {
    table.specificType('error_details', 'TEXT').nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('run_results', (table) => {
    table.dropColumn('error_details');
  });
}
