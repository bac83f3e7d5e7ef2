import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  // The registry of collections. Each collection's rows live in a table named `idc_<id>`, so no
  // user-chosen name ever becomes a table name.
  await db.schema.createTable('internal_collections', (table) => {
    table.increments('id').primary();
    table.integer('owner_id').unsigned().notNullable().references('users.id');
    table.string('name', 64).notNullable();
    table.specificType('columns', 'TEXT').notNullable();
    table.bigInteger('row_count').unsigned().notNullable().defaultTo(0);
    table.string('file_name', 255).nullable();
    table.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.timestamp('updated_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.unique(['owner_id', 'name']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('internal_collections');
}
