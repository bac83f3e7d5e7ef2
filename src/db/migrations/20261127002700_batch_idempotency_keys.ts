import type { Knex } from 'knex';

/**
 * Batch submissions with an `Idempotency-Key` (docs/execution.md, "Batch"): the key, unique per user
 * (case-sensitive, as every identity here), and the SHA-256 of the body it was first sent with, so a
 * repeat with the same body answers the first batch's id and another body is 409. Batches sent
 * without a key keep NULL in both (a unique index allows any number of NULLs).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('batches', (table) => {
    table.string('idempotency_key', 190).collate('utf8mb4_bin').nullable();
    table.specificType('body_hash', 'BINARY(32)').nullable();
    table.unique(['user_id', 'idempotency_key'], { indexName: 'batches_user_id_idempotency_key_unique' });
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('batches', (table) => {
    table.dropUnique(['user_id', 'idempotency_key'], 'batches_user_id_idempotency_key_unique');
    table.dropColumn('body_hash');
    table.dropColumn('idempotency_key');
  });
}
