import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('users', (table) => {
    table.increments('id').primary();
    table.string('username', 190).notNullable().unique();
    table.string('email', 320).nullable();
    table.string('first_name', 190).nullable();
    table.string('last_name', 190).nullable();
    table.boolean('is_admin').notNullable().defaultTo(false);
    table.boolean('enabled').notNullable().defaultTo(true);
    table.boolean('account_non_locked').notNullable().defaultTo(true);
    table.string('identity_provider', 32).notNullable().defaultTo('OIDC');
    // The score token itself (shown to its owner by the token command) and its SHA-256 for look-ups.
    table.string('score_token', 64).notNullable();
    table.specificType('score_token_hash', 'BINARY(32)').notNullable().unique();
    table.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('users');
}
