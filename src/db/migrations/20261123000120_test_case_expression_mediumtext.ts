import type { Knex } from 'knex';

/**
 * A test case's expression may be 20,000 characters (the spec's maxLength counts characters), and
 * 20,000 four-byte characters do not fit TEXT's 65,535 bytes: the insert failed with "Data too
 * long" (a 500). MEDIUMTEXT holds 16 MB.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw('ALTER TABLE scenario_test_cases MODIFY expression MEDIUMTEXT NOT NULL');
}

export async function down(db: Knex): Promise<void> {
  await db.raw('ALTER TABLE scenario_test_cases MODIFY expression TEXT NOT NULL');
}
