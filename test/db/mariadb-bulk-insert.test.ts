import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { createDatabase } from '../../src/db/database.js';
import { MariaDbBulkInserter } from '../../src/db/mariadb-bulk-insert.js';
import { applyTestEnvironment } from '../support/test-environment.js';

/** The bulk inserter's own connections: kept between inserts, replaced when the server closed them. */

applyTestEnvironment();
const TABLE = `bulk_insert_test_${process.pid}`;
let db: Knex;
let inserter: MariaDbBulkInserter;
beforeAll(async () => {
  db = createDatabase(process.env.DATABASE_URL as string, { min: 0, max: 2 });
  await db.schema.dropTableIfExists(TABLE);
  await db.schema.createTable(TABLE, (table) => {
    table.integer('id').primary();
    table.string('label', 8).notNullable();
  });
  inserter = new MariaDbBulkInserter(process.env.DATABASE_URL as string, 1);
});
afterAll(async () => {
  await inserter.close();
  await db.schema.dropTableIfExists(TABLE);
  await db.destroy();
});

const insert = (rows: unknown[][]) => inserter.insert(`INSERT INTO ${TABLE} (id, label) VALUES (?, ?)`, rows);

it('inserts many rows in one statement, and says how many', async () => {
  expect(
    await insert([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]),
  ).toEqual({ affectedRows: 3, warnings: 0 });
  expect(await db(TABLE).orderBy('id').pluck('label')).toEqual(['a', 'b', 'c']);
});

it('replaces a kept connection the server closed between inserts, without an uncaught error', async () => {
  await insert([[10, 'x']]);
  // The connection kept since that insert, killed from another session (as wait_timeout or a restart would end it).
  const [kept] = (inserter as unknown as { idle: Array<{ threadId: number }> }).idle;
  await db.raw('KILL CONNECTION ?', [kept.threadId]);
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await insert([[12, 'z']])).toEqual({ affectedRows: 1, warnings: 0 });
  expect(await db(TABLE).whereIn('id', [10, 12]).orderBy('id').pluck('label')).toEqual(['x', 'z']);
});

it('throws the database refusal of a row as it is (not a connection failure)', async () => {
  const refusal = await insert([[20, 'too long for eight']]).catch((error: unknown) => error);
  expect(refusal).toMatchObject({ errno: 1406 });
  expect((refusal as { fatal?: boolean }).fatal).toBeFalsy();
});
