import type { Knex } from 'knex';

/**
 * Shadows (issue 32, docs/live-tests.md): a version of a scenario run beside its live (champion)
 * version on live traffic. `shadows` holds what was asked, the shadow version exactly as it was when
 * attached (the development version changes in place), its state and its budget skips;
 * `shadow_runs` one row per shadow run, the champion's outcome beside the shadow's, linked by the
 * champion run's id. The report is folded from `shadow_runs` in id order (a cursor), never rescanned.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('shadows', (table) => {
    table.string('id', 36).collate('utf8mb4_bin').primary();
    table.integer('scenario_id').unsigned().notNullable().references('scenarios.id').onDelete('CASCADE');
    table.integer('owner_id').unsigned().notNullable();
    table.string('created_by', 190).collate('utf8mb4_bin').notNullable();
    // The shadow: its label (`develop`, `1`, …), its version row, content hash and document as attached.
    table.string('shadow_version', 32).collate('utf8mb4_bin').notNullable();
    table.integer('shadow_version_id').unsigned().notNullable();
    table.string('shadow_hash', 64).notNullable();
    table.specificType('shadow_document', 'LONGTEXT').notNullable();
    // The champion it runs beside: the deployed version when attached.
    table.string('champion_version', 32).collate('utf8mb4_bin').notNullable();
    table.integer('champion_version_id').unsigned().notNullable();
    table.double('sample_rate').notNullable();
    table.text('outputs').notNullable();
    table.enum('state', ['RUNNING', 'STOPPED', 'ENDED']).notNullable();
    table.text('ended_reason').nullable();
    table.bigInteger('skipped').unsigned().notNullable().defaultTo(0);
    table.datetime('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.datetime('stopped_at', { precision: 3 }).nullable();
    table.datetime('ended_at', { precision: 3 }).nullable();
    table.index(['scenario_id', 'created_at'], 'shadows_scenario_time');
  });
  await db.schema.createTable('shadow_runs', (table) => {
    table.bigIncrements('id');
    table.string('shadow_id', 36).collate('utf8mb4_bin').notNullable().references('shadows.id').onDelete('CASCADE');
    // The champion run's id: its sync run id or result id, and its decision record's id.
    table.string('run_id', 36).collate('utf8mb4_bin').notNullable();
    table.string('request_id', 190).collate('utf8mb4_bin').notNullable();
    table.datetime('began_at', { precision: 3 }).notNullable();
    // JSON texts: each side's {result, error}, and the shadow's HTTP calls served from the champion's captures.
    table.specificType('champion', 'MEDIUMTEXT').notNullable();
    table.specificType('shadow', 'MEDIUMTEXT').notNullable();
    table.text('calls').notNullable();
    table.integer('duration_micros').unsigned().notNullable();
    table.datetime('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.index(['shadow_id', 'id'], 'shadow_runs_shadow_id');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('shadow_runs');
  await db.schema.dropTable('shadows');
}
