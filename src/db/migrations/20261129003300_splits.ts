import type { Knex } from 'knex';

/**
 * Champion/challenger splits (issue 32, docs/live-tests.md): live traffic of a scenario shared between
 * its deployed (champion) version and challengers, by percentage. `splits` holds the arms (the
 * challengers' documents exactly as they were when the split started), the sticky input, its state and
 * who ended or promoted it; `split_runs` one row per live run given to an arm, folded by the report in
 * id order (a cursor), never rescanned.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('splits', (table) => {
    table.string('id', 36).collate('utf8mb4_bin').primary();
    table.integer('scenario_id').unsigned().notNullable().references('scenarios.id').onDelete('CASCADE');
    table.integer('owner_id').unsigned().notNullable();
    table.string('created_by', 190).collate('utf8mb4_bin').notNullable();
    table.string('champion_version', 32).collate('utf8mb4_bin').notNullable();
    table.integer('champion_version_id').unsigned().notNullable();
    // JSON: [{version, versionId, contentHash, percent}] and, apart (only the live path reads them), the documents.
    table.text('arms').notNullable();
    table.specificType('arm_documents', 'LONGTEXT').notNullable();
    table.string('sticky_by', 64).collate('utf8mb4_bin').nullable();
    table.string('decision_output', 64).collate('utf8mb4_bin').notNullable();
    table.enum('state', ['RUNNING', 'ENDED']).notNullable();
    table.text('ended_reason').nullable();
    table.string('ended_by', 190).collate('utf8mb4_bin').nullable();
    table.string('promoted_version', 32).collate('utf8mb4_bin').nullable();
    table.datetime('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.datetime('ended_at', { precision: 3 }).nullable();
    table.index(['scenario_id', 'state'], 'splits_scenario_state');
  });
  await db.schema.createTable('split_runs', (table) => {
    table.bigIncrements('id');
    table.string('split_id', 36).collate('utf8mb4_bin').notNullable().references('splits.id').onDelete('CASCADE');
    table.string('arm', 32).collate('utf8mb4_bin').notNullable();
    table.boolean('failed').notNullable();
    // The decision output's value as JSON text (null: the run failed).
    table.text('decision').nullable();
    table.integer('duration_micros').unsigned().notNullable();
    table.datetime('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.index(['split_id', 'id'], 'split_runs_split_id');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('split_runs');
  await db.schema.dropTable('splits');
}
