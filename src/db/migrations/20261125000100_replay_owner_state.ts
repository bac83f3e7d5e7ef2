import type { Knex } from 'knex';

/**
 * startReplay counts an owner's replays that are QUEUED or RUNNING (REPLAY_MAX_ACTIVE_PER_OWNER,
 * docs/replay.md): read through this index, not a scan of every replay with its report.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('replays', (table) => {
    table.index(['owner_id', 'state'], 'replays_owner_state');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('replays', (table) => {
    table.dropIndex(['owner_id', 'state'], 'replays_owner_state');
  });
}
