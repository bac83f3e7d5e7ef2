import type { Knex } from 'knex';

/**
 * Replays whose job is lost are run again (docs/replay.md, "Interrupted replays"): `queued_at` says
 * since when a QUEUED replay waits for a worker (the stalled-work sweeper queues it again after
 * STALLED_WORK_AFTER_SECONDS), and `heartbeat_at` when the worker running it last said it is alive
 * (a job finds a RUNNING replay with a fresh heartbeat taken, and leaves it to its worker).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('replays', (table) => {
    table.datetime('queued_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.datetime('heartbeat_at', { precision: 3 }).nullable();
    table.index(['state', 'queued_at'], 'replays_state_queued');
  });
  // Replays stored before: queued since they were made.
  await db('replays').update({ queued_at: db.ref('created_at') });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('replays', (table) => {
    table.dropIndex(['state', 'queued_at'], 'replays_state_queued');
    table.dropColumn('heartbeat_at');
    table.dropColumn('queued_at');
  });
}
