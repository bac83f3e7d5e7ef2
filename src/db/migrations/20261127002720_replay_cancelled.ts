import type { Knex } from 'knex';

/** cancelReplay (docs/replay.md, "Cancelling"): a replay can end CANCELLED; `error` says who cancelled it. */
export async function up(db: Knex): Promise<void> {
  await db.raw(
    "ALTER TABLE replays MODIFY state ENUM('QUEUED', 'RUNNING', 'FINISHED', 'FAILED', 'CANCELLED') NOT NULL",
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw("UPDATE replays SET state = 'FAILED' WHERE state = 'CANCELLED'");
  await db.raw("ALTER TABLE replays MODIFY state ENUM('QUEUED', 'RUNNING', 'FINISHED', 'FAILED') NOT NULL");
}
