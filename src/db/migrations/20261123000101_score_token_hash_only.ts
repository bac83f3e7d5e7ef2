import type { Knex } from 'knex';

/**
 * Score tokens are stored only as their SHA-256 (issue 9): the plain-text column goes. Each row's
 * hash is recomputed from the plain text first, so every token in use keeps working. The hash
 * becomes nullable: a user provisioned by an access token has no score token until one is issued
 * (`npm run token -- <user>`), and the token is shown only then.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw('UPDATE users SET score_token_hash = UNHEX(SHA2(score_token, 256))');
  await db.raw('ALTER TABLE users MODIFY score_token_hash BINARY(32) NULL');
  await db.schema.alterTable('users', (table) => {
    table.dropColumn('score_token');
  });
}

/** The plain text cannot come back: the column returns empty; users need a new token (`--rotate`). */
export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.string('score_token', 64).nullable();
  });
}
