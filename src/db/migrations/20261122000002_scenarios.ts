import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('scenarios', (table) => {
    table.increments('id').primary();
    table.integer('owner_id').unsigned().notNullable().references('users.id');
    table.string('name', 190).notNullable();
    // Next deployed version number; bumped under a row lock so concurrent deploys get consecutive labels.
    table.integer('next_version').unsigned().notNullable().defaultTo(1);
    table.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.timestamp('updated_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.unique(['owner_id', 'name']);
  });
  await db.schema.createTable('scenario_versions', (table) => {
    table.increments('id').primary();
    table.integer('scenario_id').unsigned().notNullable().references('scenarios.id').onDelete('CASCADE');
    table.enum('status', ['DEVELOP', 'DEPLOYED']).notNullable();
    // Deployed versions: 1, 2, 3 …; the development version: NULL (its label is "develop").
    table.integer('version_number').unsigned().nullable();
    table.string('source_version', 32).nullable();
    table.string('description', 2000).notNullable().defaultTo('');
    table.specificType('content', 'LONGTEXT').notNullable();
    table.specificType('node_properties', 'LONGTEXT').notNullable();
    table.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.unique(['scenario_id', 'version_number']);
    table.index(['scenario_id', 'status']);
  });
  await db.schema.createTable('scenario_test_cases', (table) => {
    table.increments('id').primary();
    table.integer('scenario_id').unsigned().notNullable().references('scenarios.id').onDelete('CASCADE');
    table.string('name', 190).notNullable();
    table.specificType('variables', 'LONGTEXT').notNullable();
    table.specificType('expression', 'TEXT').notNullable();
    table.boolean('ignore').notNullable().defaultTo(false);
    table.integer('position').unsigned().notNullable().defaultTo(0);
    table.index(['scenario_id', 'position']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('scenario_test_cases');
  await db.schema.dropTable('scenario_versions');
  await db.schema.dropTable('scenarios');
}
