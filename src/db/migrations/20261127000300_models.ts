import type { Knex } from 'knex';

/**
 * The model registry (issue 31, docs/models.md): one row per model (per owner and name) and one per
 * immutable version, holding the file as uploaded (for download) and what the PMML reader made of it
 * (`document`, JSON text: what MODEL nodes compile, so a file is parsed once, at upload).
 * `next_version` keeps numbers of deleted versions from being reused.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('models', (table) => {
    table.increments('id').primary();
    table.integer('owner_id').unsigned().notNullable().references('users.id');
    table.string('name', 64).collate('utf8mb4_bin').notNullable();
    table.integer('next_version').unsigned().notNullable().defaultTo(1);
    table.datetime('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.unique(['owner_id', 'name']);
  });
  await db.schema.createTable('model_versions', (table) => {
    table.increments('id').primary();
    table.integer('model_id').unsigned().notNullable().references('models.id').onDelete('CASCADE');
    table.integer('version_number').unsigned().notNullable();
    table.string('format', 16).notNullable();
    table.string('model_type', 64).notNullable();
    table.string('function_name', 32).notNullable();
    table.string('file_name', 255).notNullable();
    table.integer('size_bytes').unsigned().notNullable();
    table.string('sha256', 64).notNullable();
    table.specificType('file', 'LONGTEXT').notNullable();
    table.specificType('document', 'LONGTEXT').notNullable();
    table.datetime('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.unique(['model_id', 'version_number']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('model_versions');
  await db.schema.dropTable('models');
}
