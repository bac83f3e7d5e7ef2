import type { Knex } from 'knex';

/**
 * The callback secret a rotation replaced, kept sealed until `callback_secret_previous_until`
 * (CALLBACK_SECRET_OVERLAP_SECONDS after the rotation): callbacks are signed with both meanwhile, so a receiver
 * can switch to the new secret without refusing callbacks (docs/execution.md, "Rotating a callback secret").
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.binary('callback_secret_previous_sealed', 128).nullable();
    table.dateTime('callback_secret_previous_until', { precision: 3 }).nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.dropColumn('callback_secret_previous_sealed');
    table.dropColumn('callback_secret_previous_until');
  });
}
