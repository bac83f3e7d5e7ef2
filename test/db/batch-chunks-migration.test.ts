import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createLegacyDatabase, type LegacyDatabase } from '../support/legacy-database.js';

/** Migration 20261123000130_batch_chunks, run on a database holding batches stored the previous way. */
const BEFORE_BATCH_CHUNKS = '20261123000120_test_case_expression_mediumtext';

let legacy: LegacyDatabase;

beforeAll(async () => {
  legacy = await createLegacyDatabase('legacy_batches', 'utf8mb4_bin', BEFORE_BATCH_CHUNKS);
});
afterAll(async () => legacy.drop());

it('turns the unfinished elements of batches stored before it into chunk rows, keeping finished ones', async () => {
  const { db } = legacy;
  const [userId] = await db('users').insert({
    username: `migration-${randomUUID().slice(0, 8)}`,
    score_token_hash: Buffer.alloc(32, 7),
  });
  const batchId = randomUUID();
  await db('batches').insert({ id: batchId, user_id: userId, scenario_name: 's', total: 5, chunk_count: 2 });
  const legacyElements = [
    ['SUCCEEDED', { a: 0 }],
    ['QUEUED', { a: 1 }],
    ['RUNNING', { a: 2 }],
    ['SUCCEEDED', { a: 3 }],
    ['QUEUED', { a: 4 }],
  ] as const;
  const ids = legacyElements.map(() => randomUUID());
  await db('run_results').insert(
    legacyElements.map(([state, input], index) => ({
      id: ids[index],
      user_id: userId,
      request_id: ids[index],
      scenario_name: 's',
      batch_id: batchId,
      element_index: index,
      state,
      input: JSON.stringify(input),
      result: state === 'SUCCEEDED' ? JSON.stringify({ doubled: input.a * 2 }) : null,
    })),
  );

  await legacy.migrateToLatest();

  const chunks = await db('batch_chunks')
    .where({ batch_id: batchId })
    .orderBy('from_index')
    .select('from_index', 'to_index', 'inputs', 'started_at', 'finished_at');
  expect(
    chunks.map((chunk: { from_index: number; to_index: number; inputs: string }) => [
      chunk.from_index,
      chunk.to_index,
      JSON.parse(chunk.inputs),
    ]),
  ).toEqual([
    [1, 3, [{ a: 1 }, { a: 2 }]],
    [4, 5, [{ a: 4 }]],
  ]);
  const left = await db('run_results')
    .where({ batch_id: batchId })
    .orderBy('element_index')
    .select('id', 'element_index');
  expect(left).toEqual([
    { id: ids[0], element_index: 0 },
    { id: ids[3], element_index: 3 },
  ]);
});
