import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createLegacyDatabase, type LegacyDatabase } from '../support/legacy-database.js';

/** Migration 20261123000140_batch_chunk_counts, run on a database holding batches stored before it. */
const BEFORE_COUNTS = '20261123000130_batch_chunks';

let legacy: LegacyDatabase;

beforeAll(async () => {
  legacy = await createLegacyDatabase('legacy_counts', 'utf8mb4_bin', BEFORE_COUNTS);
});
afterAll(async () => legacy.drop());

it('counts the stored results of the parts finished before it, and leaves unfinished parts at zero', async () => {
  const { db } = legacy;
  const [userId] = await db('users').insert({
    username: `counts-${randomUUID().slice(0, 8)}`,
    score_token_hash: Buffer.alloc(32, 9),
  });
  const batchId = randomUUID();
  await db('batches').insert({ id: batchId, user_id: userId, scenario_name: 's', total: 6, chunk_count: 2 });
  await db('batch_chunks').insert([
    {
      batch_id: batchId,
      from_index: 0,
      to_index: 3,
      inputs: '[{},{},{}]',
      started_at: new Date(),
      finished_at: new Date(),
    },
    { batch_id: batchId, from_index: 3, to_index: 6, inputs: '[{},{},{}]', started_at: new Date() },
  ]);
  const states = ['SUCCEEDED', 'FAILED', 'SUCCEEDED', 'SUCCEEDED'];
  await db('run_results').insert(
    states.map((state, index) => {
      const id = randomUUID();
      return {
        id,
        user_id: userId,
        request_id: id,
        scenario_name: 's',
        batch_id: batchId,
        element_index: index,
        state,
      };
    }),
  );

  await legacy.migrateToLatest();

  const parts = await db('batch_chunks')
    .where({ batch_id: batchId })
    .orderBy('from_index')
    .select('from_index', 'succeeded', 'failed');
  expect(parts).toEqual([
    { from_index: 0, succeeded: 2, failed: 1 },
    { from_index: 3, succeeded: 0, failed: 0 },
  ]);
});
