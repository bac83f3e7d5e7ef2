import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { UserService } from '../../src/auth/user-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../../src/db/database.js';
import * as batchChunks from '../../src/db/migrations/20261122000020_batch_chunks.js';
import { applyTestEnvironment } from '../support/test-environment.js';

// A database of its own: this test runs a migration down and up again.
let db: Knex;
let name: string;

beforeAll(async () => {
  applyTestEnvironment();
  const url = new URL(process.env.DATABASE_URL as string);
  name = `${url.pathname.slice(1)}_migration`.slice(0, 64);
  url.pathname = '/';
  const server = createDatabase(url.toString(), { min: 0, max: 1 });
  await server.raw('DROP DATABASE IF EXISTS ??', [name]);
  await server.destroy();
  url.pathname = `/${name}`;
  await ensureDatabaseExists(url.toString());
  db = createDatabase(url.toString(), { min: 0, max: 2 });
  await migrateToLatest(db);
});
afterAll(async () => {
  await db.raw('DROP DATABASE ??', [name]);
  await db.destroy();
});

it('turns the unfinished elements of batches stored before it into chunk rows, keeping finished ones', async () => {
  await batchChunks.down(db);
  const { id: userId } = await new UserService(new UserStore(db)).ensureUser(`migration-${randomUUID().slice(0, 8)}`, false);
  const batchId = randomUUID();
  await db('batches').insert({ id: batchId, user_id: userId, scenario_name: 's', total: 5, chunk_count: 2 });
  const legacy = [['SUCCEEDED', { a: 0 }], ['QUEUED', { a: 1 }], ['RUNNING', { a: 2 }], ['SUCCEEDED', { a: 3 }], ['QUEUED', { a: 4 }]] as const;
  const ids = legacy.map(() => randomUUID());
  await db('run_results').insert(legacy.map(([state, input], index) => ({
    id: ids[index], user_id: userId, request_id: ids[index], scenario_name: 's', batch_id: batchId, element_index: index, state, input: JSON.stringify(input),
    result: state === 'SUCCEEDED' ? JSON.stringify({ doubled: input.a * 2 }) : null,
  })));

  await batchChunks.up(db);

  const chunks = await db('batch_chunks').where({ batch_id: batchId }).orderBy('from_index').select('from_index', 'to_index', 'inputs', 'started_at', 'finished_at');
  expect(chunks.map((chunk: { from_index: number; to_index: number; inputs: string }) => [chunk.from_index, chunk.to_index, JSON.parse(chunk.inputs)])).toEqual([
    [1, 3, [{ a: 1 }, { a: 2 }]],
    [4, 5, [{ a: 4 }]],
  ]);
  const left = await db('run_results').where({ batch_id: batchId }).orderBy('element_index').select('id', 'element_index');
  expect(left).toEqual([{ id: ids[0], element_index: 0 }, { id: ids[3], element_index: 3 }]);
});
