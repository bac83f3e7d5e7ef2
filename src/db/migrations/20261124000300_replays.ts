import type { Knex } from 'knex';

/**
 * Replays (issue 13 §4, docs/replay.md): one row per replay of a candidate version against a
 * scenario's decision records, holding what was asked, the candidate exactly as it was when the
 * replay was started (the development version changes in place), its progress, and the report once
 * finished. Deployed versions name the replay they were deployed with (`scenario_versions.replay_id`).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('replays', (table) => {
    table.string('id', 36).collate('utf8mb4_bin').primary();
    table.integer('scenario_id').unsigned().notNullable().references('scenarios.id').onDelete('CASCADE');
    table.integer('owner_id').unsigned().notNullable();
    table.integer('requester_id').unsigned().notNullable();
    // The candidate: its label (`develop`, `1`, …), its version row, and its document as replayed.
    table.string('candidate_version', 32).collate('utf8mb4_bin').notNullable();
    table.integer('candidate_version_id').unsigned().notNullable();
    // SHA-256 of the candidate's content and node properties: deploy compares it with what it deploys.
    table.string('candidate_hash', 64).notNullable();
    table.specificType('candidate_document', 'LONGTEXT').notNullable();
    // JSON texts: the browse filters, the compared outputs.
    table.text('filter').notNullable();
    table.text('outputs').notNullable();
    table.integer('record_limit').unsigned().notNullable();
    table.integer('sample_size').unsigned().notNullable();
    table.enum('state', ['QUEUED', 'RUNNING', 'FINISHED', 'FAILED']).notNullable();
    table.integer('total').unsigned().notNullable();
    table.integer('done').unsigned().notNullable().defaultTo(0);
    table.integer('failed').unsigned().notNullable().defaultTo(0);
    table.specificType('report', 'LONGTEXT').nullable();
    table.text('error').nullable();
    table.datetime('created_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.datetime('started_at', { precision: 3 }).nullable();
    table.datetime('finished_at', { precision: 3 }).nullable();
    table.index(['scenario_id', 'created_at'], 'replays_scenario_time');
  });
  await db.schema.alterTable('scenario_versions', (table) => {
    // The replay a deployed version was deployed with (deployScenario `replay`); no foreign key: a
    // version's history keeps the reference as it was given.
    table.string('replay_id', 36).collate('utf8mb4_bin').nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('scenario_versions', (table) => {
    table.dropColumn('replay_id');
  });
  await db.schema.dropTable('replays');
}
