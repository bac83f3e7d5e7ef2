import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { JobStoreUnavailableError } from '../../src/execution/job-store-unavailable-error.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

/**
 * Issue 27, problem 4: a batch whose 202 was lost still ran, and its client could neither find it nor
 * send it again safely. submitBatch takes an Idempotency-Key; listBatches lists a user's batches.
 */
let t: TestApp;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  isolateJobStore('batch-idempotency');
  t = await createTestApp();
  await t.services.execution.startWorker();
  alice = await t.newUser();
  bob = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, bob.id, 'double', doublingScenario());
});
afterAll(() => t.close());

const submit = (body: object, key?: string, token = alice.scoreToken) => {
  const sent = request(t.app).post('/api/batch/score').set('Score-Token', token);
  return (key === undefined ? sent : sent.set('Idempotency-Key', key)).send(body);
};
const list = (query: Record<string, string | number> = {}, token = alice.scoreToken) =>
  request(t.app).get('/api/batch').set('Score-Token', token).query(query);
const batchCount = async (userId: number) =>
  Number(((await t.services.db('batches').where({ user_id: userId }).count({ n: '*' })) as Array<{ n: number }>)[0].n);

describe('submitBatch with Idempotency-Key', () => {
  it('answers a repeat with the same key and body with the first batch’s id, and runs the batch once', async () => {
    const key = randomUUID();
    const body = { scenarioName: 'double', parameters: [{ a: 1 }, { a: 2 }] };
    const before = await batchCount(alice.id);
    const first = await submit(body, key);
    expect(first.status).toBe(202);
    // The same JSON value sent with other whitespace is the same body.
    const again = await request(t.app)
      .post('/api/batch/score')
      .set('Score-Token', alice.scoreToken)
      .set('Idempotency-Key', key)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body, null, 2));
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ batchTaskId: first.body.batchTaskId });
    expect(await batchCount(alice.id)).toBe(before + 1);
    const done = await waitFor(async () => {
      const status = await request(t.app)
        .get(`/api/batch/${first.body.batchTaskId}`)
        .set('Score-Token', alice.scoreToken);
      return status.body.state === 'FINISHED' ? status : undefined;
    });
    expect(done.body).toMatchObject({ total: 2, completed: 2 });
  });

  it('answers 409 IDEMPOTENCY_KEY_REUSED to the same key with another body, and stores nothing', async () => {
    const key = randomUUID();
    expect((await submit({ scenarioName: 'double', parameters: [{ a: 1 }] }, key)).status).toBe(202);
    const before = await batchCount(alice.id);
    const other = await submit({ scenarioName: 'double', parameters: [{ a: 2 }] }, key);
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({
      status: 409,
      code: 'IDEMPOTENCY_KEY_REUSED',
      details: [{ path: 'header.Idempotency-Key', message: 'already used with another body' }],
    });
    expect(await batchCount(alice.id)).toBe(before);
  });

  it('keeps keys per user: another user’s key of the same text is a batch of their own', async () => {
    const key = randomUUID();
    const body = { scenarioName: 'double', parameters: [{ a: 1 }] };
    const alices = await submit(body, key);
    const bobs = await submit(body, key, bob.scoreToken);
    expect([alices.status, bobs.status]).toEqual([202, 202]);
    expect(bobs.body.batchTaskId).not.toBe(alices.body.batchTaskId);
  });

  it('stores one batch when the same key and body are submitted many times at once', async () => {
    const key = randomUUID();
    const before = await batchCount(alice.id);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => submit({ scenarioName: 'double', parameters: [{ a: 5 }] }, key)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 202));
    expect(new Set(answers.map((answer) => answer.body.batchTaskId)).size).toBe(1);
    expect(await batchCount(alice.id)).toBe(before + 1);
  });

  it('frees the key when the job store refused the batch (503): the repeat stores it', async () => {
    const key = randomUUID();
    jest
      .spyOn(t.services.execution.queue, 'enqueueChunks')
      .mockRejectedValueOnce(new JobStoreUnavailableError('connection lost'));
    const failed = await submit({ scenarioName: 'double', parameters: [{ a: 1 }] }, key);
    expect([failed.status, failed.body.code]).toEqual([503, 'JOB_STORE_UNAVAILABLE']);
    const again = await submit({ scenarioName: 'double', parameters: [{ a: 1 }] }, key);
    expect(again.status).toBe(202);
  });

  it('answers 400 naming the header for a key that is not printable ASCII without spaces or is too long', async () => {
    for (const key of ['has space', 'x'.repeat(191)]) {
      const response = await submit({ scenarioName: 'double', parameters: [{ a: 1 }] }, key);
      expect(response.status).toBe(400);
      expect(response.body.details[0].path).toMatch(/idempotency-key/i);
    }
  });

  it('answers 404 for an unknown scenario, also with a key (nothing stored under the key)', async () => {
    const key = randomUUID();
    expect((await submit({ scenarioName: 'nope', parameters: [{ a: 1 }] }, key)).body.code).toBe('SCENARIO_NOT_FOUND');
    expect((await submit({ scenarioName: 'double', parameters: [{ a: 1 }] }, key)).status).toBe(202);
  });
});

describe('listBatches', () => {
  it('lists only the caller’s batches, newest first, page by page with nextCursor, each with its key', async () => {
    const carol = await t.newUser();
    await deployScenario(t.services.db, carol.id, 'double', doublingScenario());
    const ids: string[] = [];
    for (let k = 0; k < 5; k += 1)
      ids.push(
        (await submit({ scenarioName: 'double', parameters: [{ a: k }] }, `carol-${k}`, carol.scoreToken)).body
          .batchTaskId,
      );
    const seen: Array<{ batchTaskId: string; idempotencyKey: string | null }> = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await list(cursor ? { limit: 2, cursor } : { limit: 2 }, carol.scoreToken);
      expect(page.status).toBe(200);
      expect(page.body.batches.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.batches);
      cursor = page.body.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.map((batch) => batch.batchTaskId)).toEqual([...ids].reverse());
    expect(seen.map((batch) => batch.idempotencyKey)).toEqual(['carol-4', 'carol-3', 'carol-2', 'carol-1', 'carol-0']);
    const first = (await list({}, carol.scoreToken)).body.batches[0];
    expect(Object.keys(first).sort()).toEqual([
      'batchTaskId',
      'createdAt',
      'finishedAt',
      'idempotencyKey',
      'scenarioName',
      'state',
      'total',
    ]);
    expect(first).toMatchObject({ scenarioName: 'double', total: 1 });
    expect(['QUEUED', 'RUNNING', 'FINISHED']).toContain(first.state);
  });

  it('shows a finished batch FINISHED and a batch without a key with idempotencyKey null', async () => {
    const dave = await t.newUser();
    await deployScenario(t.services.db, dave.id, 'double', doublingScenario());
    const { body } = await submit({ scenarioName: 'double', parameters: [{ a: 1 }] }, undefined, dave.scoreToken);
    const listed = await waitFor(async () => {
      const page = await list({}, dave.scoreToken);
      return page.body.batches[0]?.state === 'FINISHED' ? page : undefined;
    });
    expect(listed.body).toEqual({
      batches: [
        expect.objectContaining({
          batchTaskId: body.batchTaskId,
          idempotencyKey: null,
          finishedAt: expect.any(String),
        }),
      ],
      nextCursor: null,
    });
  });

  it('answers an empty page to a user without batches', async () => {
    const erin = await t.newUser();
    expect((await list({}, erin.scoreToken)).body).toEqual({ batches: [], nextCursor: null });
  });

  it('answers 400 for a cursor it did not issue and for a limit out of range', async () => {
    const forged = await list({ cursor: 'not-a-cursor' });
    expect([forged.status, forged.body.code, forged.body.details[0].path]).toEqual([
      400,
      'VALIDATION_FAILED',
      'query.cursor',
    ]);
    expect((await list({ limit: 0 })).status).toBe(400);
    expect((await list({ limit: 101 })).status).toBe(400);
  });

  it('answers 401 without a score token and with a wrong one', async () => {
    expect((await request(t.app).get('/api/batch')).status).toBe(401);
    expect((await list({}, 'not-a-token')).status).toBe(401);
  });

  it('answers 503 DATABASE_UNAVAILABLE with Retry-After when MySQL does not answer', async () => {
    const unreachable = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), {
      code: 'ECONNREFUSED',
      fatal: true,
    });
    jest.spyOn(t.services.execution.batchStore, 'listBatches').mockRejectedValueOnce(unreachable);
    const response = await list();
    expect([response.status, response.body.code, response.headers['retry-after']]).toEqual([
      503,
      'DATABASE_UNAVAILABLE',
      '5',
    ]);
  });
});
