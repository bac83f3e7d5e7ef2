import type { Knex } from 'knex';

/**
 * Decision records (issue 13, docs/records.md): one row per recorded run (sync, async, batch element)
 * and one row of recording settings per scenario that changed the defaults.
 *
 * `seq` orders rows that began in the same millisecond and is the primary key, so every secondary
 * index ends with it: the newest-first keyset `(began_at DESC, seq DESC)` of a scenario is read from
 * `(scenario_id, began_at)` alone, and so are the time-range filter and the retention deletes. The
 * version, state and request-id filters have an index each. No foreign key on the scenario: records
 * are inserted in bulk behind the hot path, and a check per row would only slow that down.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('decision_records', (table) => {
    // Ids, labels and request ids compare exactly (case-sensitive), whatever the database's default collation.
    table.bigIncrements('seq').primary();
    // The public id: the sync run id (X-SCE-RunId), the async run's or batch element's result id.
    table.string('id', 36).collate('utf8mb4_bin').notNullable().unique();
    table.integer('owner_id').unsigned().notNullable();
    table.integer('scenario_id').unsigned().notNullable();
    table.string('scenario_name', 190).collate('utf8mb4_bin').notNullable();
    table.string('version', 32).collate('utf8mb4_bin').notNullable();
    // The scenario_versions row that ran: a replay runs exactly this document.
    table.integer('version_id').unsigned().notNullable();
    table.enum('mode', ['SYNC', 'ASYNC', 'BATCH']).notNullable();
    table.integer('requester_id').unsigned().notNullable();
    table.string('request_id', 190).collate('utf8mb4_bin').notNullable();
    table.string('batch_id', 36).nullable();
    table.enum('state', ['SUCCEEDED', 'FAILED']).notNullable();
    // JSON texts. inputs: pii-tagged variables already masked; masked_inputs: their names.
    table.specificType('inputs', 'LONGTEXT').notNullable();
    table.text('masked_inputs').nullable();
    table.specificType('result', 'LONGTEXT').nullable();
    table.specificType('error', 'LONGTEXT').nullable();
    table.datetime('began_at', { precision: 3 }).notNullable();
    table.datetime('ended_at', { precision: 3 }).notNullable();
    table.integer('duration_micros').unsigned().notNullable();
    table.specificType('trace', 'LONGTEXT').nullable();
    // What HTTP_CALL and DATA_LOOKUP nodes received, in call order (NULL: the run made no such call).
    table.specificType('captures', 'LONGTEXT').nullable();
    table.datetime('recorded_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.index(['scenario_id', 'began_at'], 'decision_records_scenario_time');
    table.index(['scenario_id', 'version', 'began_at'], 'decision_records_scenario_version_time');
    table.index(['scenario_id', 'state', 'began_at'], 'decision_records_scenario_state_time');
    table.index(['scenario_id', 'request_id'], 'decision_records_scenario_request');
  });
  await db.schema.createTable('recording_settings', (table) => {
    table.integer('scenario_id').unsigned().primary().references('scenarios.id').onDelete('CASCADE');
    table.boolean('enabled').notNullable();
    table.integer('retention_days').unsigned().notNullable();
    table.double('sync_sample_rate').notNullable();
    table.boolean('trace').notNullable();
    table.datetime('updated_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('recording_settings');
  await db.schema.dropTable('decision_records');
}
