import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('batches', (table) => {
    table.string('id', 36).primary();
    table.integer('user_id').unsigned().notNullable().references('users.id');
    table.string('scenario_name', 190).notNullable();
    table.integer('total').unsigned().notNullable();
    table.integer('chunk_count').unsigned().notNullable();
    table.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.timestamp('finished_at', { precision: 3 }).nullable();
    table.index(['user_id', 'created_at']);
  });
  await db.schema.createTable('run_results', (table) => {
    // The result id: the caller's X-SCE-RequestId for async runs, generated for batch elements.
    table.string('id', 36).primary();
    table.integer('user_id').unsigned().notNullable().references('users.id');
    table.string('request_id', 190).notNullable();
    table.string('scenario_name', 190).notNullable();
    table.string('batch_id', 36).nullable().references('batches.id').onDelete('CASCADE');
    table.integer('element_index').unsigned().nullable();
    table.enum('state', ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED']).notNullable();
    table.specificType('input', 'LONGTEXT').nullable();
    table.specificType('result', 'LONGTEXT').nullable();
    table.string('error_code', 64).nullable();
    table.text('error_message').nullable();
    table.string('version', 32).nullable();
    table.string('callback_url', 2048).nullable();
    table.integer('callback_retry_count').unsigned().notNullable().defaultTo(0);
    table.integer('callback_retry_delay').unsigned().notNullable().defaultTo(0);
    table.enum('callback_state', ['NONE', 'PENDING', 'DELIVERED', 'FAILED']).notNullable().defaultTo('NONE');
    table.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.timestamp('started_at', { precision: 3 }).nullable();
    table.timestamp('finished_at', { precision: 3 }).nullable();
    table.unique(['user_id', 'request_id']);
    table.index(['batch_id', 'element_index']);
  });
  await db.schema.createTable('callback_attempts', (table) => {
    table.bigIncrements('id').primary();
    table.string('result_id', 36).notNullable().references('run_results.id').onDelete('CASCADE');
    table.integer('attempt').unsigned().notNullable();
    table.integer('http_status').nullable();
    table.string('error', 1000).nullable();
    table.timestamp('attempted_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.index(['result_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('callback_attempts');
  await db.schema.dropTable('run_results');
  await db.schema.dropTable('batches');
}
