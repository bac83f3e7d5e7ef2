import type { Knex } from 'knex';

/**
 * Each user's own callback signing secret (src/auth/callback-secrets.ts): stored encrypted with the server's
 * CALLBACK_SECRETS_KEY (AES-256-GCM), not hashed like the score token, because the service must sign with it.
 * NULL until the user is issued one (`npm run token -- <user> --callback-secret`).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.binary('callback_secret_sealed', 128).nullable();
    table.dateTime('callback_secret_issued_at').nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.dropColumn('callback_secret_sealed');
    table.dropColumn('callback_secret_issued_at');
  });
}
