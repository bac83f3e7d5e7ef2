import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Papa from 'papaparse';
import request from 'supertest';
import { loadSpec } from '../../src/http/api-docs.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

let t: TestApp;
let alice: TestUser;
const CHUNK = 7;

beforeAll(async () => {
  isolateJobStore('batch-results');
  t = await createTestApp({ configOverrides: { batchChunkSize: CHUNK } });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
});
afterAll(() => t.close());

/** Reads any body as text (supertest buffers only the media types it knows). */
function asText(response: IncomingMessage, callback: (error: Error | null, body: string) => void): void {
  let text = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    text += chunk;
  });
  response.on('end', () => callback(null, text));
}

const results = (batchId: string, token = alice.scoreToken, accept?: string) => {
  const call = request(t.app)
    .get(`/api/batch/${batchId}/results`)
    .query({ key: token })
    .buffer(true)
    .parse(asText as never);
  return accept ? call.set('Accept', accept) : call;
};

async function finishedBatch(
  parameters: Array<Record<string, unknown>>,
): Promise<{ batchTaskId: string; resultsIds: string[] }> {
  const submitted = await request(t.app)
    .post('/api/batch/score')
    .query({ key: alice.scoreToken })
    .send({ scenarioName: 'double', parameters });
  expect(submitted.status).toBe(202);
  return waitFor(async () => {
    const status = await request(t.app)
      .get(`/api/batch/${submitted.body.batchTaskId}`)
      .query({ key: alice.scoreToken });
    return status.body.state === 'FINISHED' ? status.body : undefined;
  }, 30_000);
}

/** Each NDJSON line must match the spec's BatchResultLine. */
function lineValidator(): (line: unknown) => boolean {
  const spec = loadSpec() as { components: { schemas: Record<string, unknown> } };
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ $id: 'urn:scenario-scoring:spec', components: spec.components });
  return ajv.compile({ $ref: 'urn:scenario-scoring:spec#/components/schemas/BatchResultLine' });
}

describe('getBatchResults', () => {
  it('streams one NDJSON line per element in submission order, each matching the spec', async () => {
    const batch = await finishedBatch(Array.from({ length: 30 }, (_, i) => ({ a: i })));
    const response = await results(batch.batchTaskId);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const text = response.body as string;
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(30);
    const valid = lineValidator();
    lines.forEach((line, i) => {
      expect(valid(line)).toBe(true);
      expect(line.index).toBe(i);
      expect(line.resultId).toBe(batch.resultsIds[i]);
      if (i === 13)
        expect(line).toMatchObject({
          state: 'FAILED',
          result: null,
          error: { code: 'SCRIPT_ERROR', nodeId: 'explode' },
        });
      else
        expect(line).toEqual({
          index: i,
          resultId: batch.resultsIds[i],
          state: 'SUCCEEDED',
          result: { doubled: i * 2 },
          error: null,
        });
    });
  });

  it('streams CSV with a header row when asked for text/csv, the same lines as NDJSON', async () => {
    const batch = await finishedBatch([{ a: 1 }, { a: 'x' }, { a: 13 }, { a: 4 }]);
    const csv = await results(batch.batchTaskId, alice.scoreToken, 'text/csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const parsed = Papa.parse<string[]>((csv.body as string).trimEnd(), { newline: '\r\n' });
    expect(parsed.errors).toEqual([]);
    const [header, ...rows] = parsed.data;
    expect(header).toEqual(['index', 'resultId', 'state', 'result', 'error']);
    const ndjson = ((await results(batch.batchTaskId)).body as string)
      .trimEnd()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { index: number; resultId: string; state: string; result: unknown; error: unknown },
      );
    expect(rows).toHaveLength(4);
    rows.forEach(([index, resultId, state, result, error], i) => {
      expect({
        index: Number(index),
        resultId,
        state,
        result: result === '' ? null : JSON.parse(result),
        error: error === '' ? null : JSON.parse(error),
      }).toEqual(ndjson[i]);
    });
    expect(rows[1][2]).toBe('FAILED');
    expect(JSON.parse(rows[1][4])).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('answers NDJSON to a client that accepts anything else, and CSV only when it prefers text/csv', async () => {
    const batch = await finishedBatch([{ a: 1 }, { a: 2 }]);
    for (const accept of ['application/json', '*/*', 'application/x-ndjson, text/csv;q=0.5']) {
      const response = await results(batch.batchTaskId, alice.scoreToken, accept);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/x-ndjson/);
    }
    const csv = await results(batch.batchTaskId, alice.scoreToken, 'application/x-ndjson;q=0.5, text/csv');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
  });

  it('pages through more results than one query reads, without losing or repeating one', async () => {
    // Arranged in the store directly: 4,321 finished elements (more than two pages of 2,000).
    const { batchStore } = t.services.execution;
    const batchId = randomUUID();
    const total = 4321;
    await batchStore.insertBatch({
      id: batchId,
      userId: alice.id,
      scenarioName: 'double',
      chunkSize: 1000,
      inputs: Array.from({ length: total }, (_, i) => ({ a: i })),
    });
    const batch = await batchStore.findBatch(batchId);
    const at = new Date();
    await batchStore.insertResults(
      batch!,
      Array.from({ length: total }, (_, index) => ({
        index,
        outcome: {
          state: 'SUCCEEDED' as const,
          result: { doubled: index * 2 },
          error: null,
          version: '1',
          beganAt: at,
          endedAt: at,
        },
      })),
    );
    await t.services.db('batch_chunks').where({ batch_id: batchId }).update({ started_at: at, finished_at: at });
    expect(await batchStore.finishIfComplete(batchId)).toBe(true);

    const response = await results(batchId);
    const lines = (response.body as string)
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { index: number; result: { doubled: number } });
    expect(lines).toHaveLength(total);
    expect(lines.every((line, i) => line.index === i && line.result.doubled === i * 2)).toBe(true);
  });

  it('answers 202 with the batch status and Retry-After while the batch has not finished', async () => {
    // Stored without a job: it stays QUEUED.
    const batchId = randomUUID();
    await t.services.execution.batchStore.insertBatch({
      id: batchId,
      userId: alice.id,
      scenarioName: 'double',
      chunkSize: CHUNK,
      inputs: [{ a: 1 }, { a: 2 }],
    });
    const response = await request(t.app).get(`/api/batch/${batchId}/results`).query({ key: alice.scoreToken });
    expect(response.status).toBe(202);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.body).toMatchObject({
      batchTaskId: batchId,
      state: 'QUEUED',
      total: 2,
      completed: 0,
      resultsIds: [],
    });
  });

  it("answers 404 BATCH_NOT_FOUND for an unknown batch and for another user's", async () => {
    const batch = await finishedBatch([{ a: 1 }]);
    const bob = await t.newUser();
    const other = await request(t.app).get(`/api/batch/${batch.batchTaskId}/results`).query({ key: bob.scoreToken });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('BATCH_NOT_FOUND');
    const unknown = await request(t.app).get(`/api/batch/${randomUUID()}/results`).query({ key: alice.scoreToken });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('BATCH_NOT_FOUND');
  });

  it('answers 401 without a score token or with a wrong one, and 404 for a batch id that is not one of ours', async () => {
    const batch = await finishedBatch([{ a: 1 }]);
    const missing = await request(t.app).get(`/api/batch/${batch.batchTaskId}/results`);
    expect(missing.status).toBe(401);
    expect(missing.body.status).toBe(401);
    const wrong = await request(t.app).get(`/api/batch/${batch.batchTaskId}/results`).query({ key: 'not-a-token' });
    expect(wrong.status).toBe(401);
    const header = await request(t.app)
      .get(`/api/batch/${batch.batchTaskId}/results`)
      .set('Score-Token', alice.scoreToken)
      .buffer(true)
      .parse(asText as never);
    expect(header.status).toBe(200);
    expect((await request(t.app).get('/api/batch/not-a-uuid/results').query({ key: alice.scoreToken })).body.code).toBe(
      'BATCH_NOT_FOUND',
    );
  });
});
