import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import {
  createUndeployedScenario,
  deployScenario,
  doublingScenario,
  scriptScenario,
  shoutingScenario,
  wrapperScenario,
} from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

let t: TestApp;
let alice: TestUser;
const MAX_ELEMENTS = 300;
const CHUNK = 7;

beforeAll(async () => {
  isolateJobStore('batch');
  applyTestEnvironment();
  const defaults = loadConfig();
  t = await createTestApp({
    configOverrides: { batchChunkSize: CHUNK, limits: { ...defaults.limits, batchMaxElements: MAX_ELEMENTS } },
  });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'shout', shoutingScenario());
  await deployScenario(t.services.db, alice.id, 'wrapper', wrapperScenario());
  await createUndeployedScenario(t.services.db, alice.id, 'draft');
});
afterAll(() => t.close());

const submit = (body: unknown, token = alice.scoreToken) =>
  request(t.app)
    .post('/api/batch/score')
    .query({ key: token })
    .send(body as object);
const status = (id: string, token = alice.scoreToken) => request(t.app).get(`/api/batch/${id}`).query({ key: token });
const finishedStatus = (id: string) =>
  waitFor(async () => {
    const response = await status(id);
    return response.body.state === 'FINISHED' ? response : undefined;
  }, 20_000);
const element = (name: string, resultId: string) =>
  request(t.app)
    .get(`/api/scenario/code/scoreasyncresult/${name}`)
    .set('Score-Token', alice.scoreToken)
    .set('X-SCE-RequestId', resultId);

/**
 * Makes a finished batch's parts unfinished again, with the inputs they had (a finished part keeps none), as a
 * worker that died before finishing them would have left them: all parts, or the one starting at `from`.
 */
async function unfinishParts(batchId: string, parameters: unknown[], from?: number): Promise<void> {
  const parts = (await t.services
    .db('batch_chunks')
    .where({ batch_id: batchId })
    .select('from_index', 'to_index')) as Array<{ from_index: number; to_index: number }>;
  for (const part of parts.filter((p) => from === undefined || p.from_index === from)) {
    await t.services
      .db('batch_chunks')
      .where({ batch_id: batchId, from_index: part.from_index })
      .update({
        finished_at: null,
        ...(from === undefined ? {} : { started_at: null }),
        inputs: JSON.stringify(parameters.slice(part.from_index, part.to_index)),
      });
  }
}

describe('submitBatch and getBatchStatus', () => {
  it('runs every element in chunks and lists one result id per element in submission order', async () => {
    const parameters = Array.from({ length: 30 }, (_, i) => ({ a: i }));
    const submitted = await submit({ scenarioName: 'double', parameters });
    expect(submitted.status).toBe(202);
    const { batchTaskId } = submitted.body;
    const done = await finishedStatus(batchTaskId);
    expect(done.body).toMatchObject({
      batchTaskId,
      scenarioName: 'double',
      state: 'FINISHED',
      total: 30,
      completed: 30,
      failed: 1,
    });
    expect(done.body.finishedAt).not.toBeNull();
    const ids: string[] = done.body.resultsIds;
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    const results = await Promise.all(ids.map((id) => element('double', id)));
    results.forEach((response, i) => {
      expect(response.status).toBe(200);
      expect(response.body.runId).toBe(ids[i]);
      if (i === 13)
        expect(response.body).toMatchObject({
          state: 'FAILED',
          result: null,
          error: { code: 'SCRIPT_ERROR', nodeId: 'explode' },
        });
      else expect(response.body).toMatchObject({ state: 'SUCCEEDED', result: { doubled: i * 2 }, error: null });
    });
    const batch = await t.services.db('batches').where({ id: batchTaskId }).first('chunk_count');
    expect(batch.chunk_count).toBe(Math.ceil(30 / CHUNK));
    // The inputs of finished parts (personal data, maybe) are not kept; nor are they on the elements' rows.
    const chunks = (await t.services
      .db('batch_chunks')
      .where({ batch_id: batchTaskId })
      .select('inputs', 'finished_at')) as Array<{ inputs: string; finished_at: Date | null }>;
    expect(chunks.map((chunk) => [chunk.inputs, chunk.finished_at !== null])).toEqual(chunks.map(() => ['[]', true]));
    expect(
      await t.services
        .db('run_results')
        .where({ batch_id: batchTaskId })
        .whereNotNull('input')
        .count({ n: '*' })
        .first(),
    ).toEqual({ n: 0 });
  });

  it('keeps resultsIds empty until every element finished', async () => {
    const { body } = await submit({ scenarioName: 'double', parameters: [{ a: 1 }] });
    const first = await status(body.batchTaskId);
    expect(first.status).toBe(200);
    if (first.body.state !== 'FINISHED') expect(first.body.resultsIds).toEqual([]);
    await finishedStatus(body.batchTaskId);
  });

  it('stores invalid elements as failed and runs the others', async () => {
    const { body } = await submit({ scenarioName: 'double', parameters: [{ a: 1 }, { a: 'x' }, { b: 2 }, { a: 3 }] });
    const done = await finishedStatus(body.batchTaskId);
    expect(done.body).toMatchObject({ completed: 4, failed: 2 });
    const second = await element('double', done.body.resultsIds[1]);
    expect(second.body.error.code).toBe('INVALID_INPUT');
    expect((await element('double', done.body.resultsIds[3])).body.result).toEqual({ doubled: 6 });
  });

  it('runs the wrapper-scenario pattern: elements naming different scenarios', async () => {
    const parameters = [
      { scenario_name: 'double', scenario_input: { a: 5 } },
      { scenario_name: 'shout', scenario_input: { text: 'hi' } },
      { scenario_name: 'missing', scenario_input: {} },
      { scenario_name: 'double', scenario_input: { a: 6 } },
    ];
    const { body } = await submit({ scenarioName: 'wrapper', parameters });
    const done = await finishedStatus(body.batchTaskId);
    const results = await Promise.all(done.body.resultsIds.map((id: string) => element('wrapper', id)));
    expect(results.map((r) => r.body.result)).toEqual([
      { out: { doubled: 10 } },
      { out: { shout: 'HI!' } },
      null,
      { out: { doubled: 12 } },
    ]);
    expect(results[2].body.error).toMatchObject({ nodeId: 'call' });
  });

  it('re-running a chunk after a crash skips finished elements and duplicates nothing', async () => {
    const parameters = Array.from({ length: 10 }, (_, i) => ({ a: i }));
    const { body } = await submit({ scenarioName: 'double', parameters });
    const done = await finishedStatus(body.batchTaskId);
    const ids: string[] = done.body.resultsIds;
    // As if a worker died after storing elements 0–1 and 5–9 of a chunk it had started (its parts unfinished, with their inputs).
    await t.services
      .db('run_results')
      .where({ batch_id: body.batchTaskId })
      .whereBetween('element_index', [2, 4])
      .delete();
    await unfinishParts(body.batchTaskId, parameters);
    await t.services.db('batches').where({ id: body.batchTaskId }).update({ finished_at: null });
    expect((await status(body.batchTaskId)).body).toMatchObject({ state: 'RUNNING', completed: 7 });
    await t.services.execution.worker.chunk({ batchId: body.batchTaskId, from: 0, to: 10 }, async () => undefined);
    await t.services.execution.worker.chunk({ batchId: body.batchTaskId, from: 0, to: 10 }, async () => undefined);
    const rows = await t.services
      .db('run_results')
      .where({ batch_id: body.batchTaskId })
      .orderBy('element_index')
      .select('id', 'element_index', 'state', 'result');
    expect(rows.map((r: { element_index: number }) => r.element_index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Elements stored before the crash keep their result ids; the re-run ones got new ones.
    expect(rows.map((r: { id: string }) => r.id).filter((id: string) => ids.includes(id))).toEqual([
      ...ids.slice(0, 2),
      ...ids.slice(5),
    ]);
    expect(rows.every((r: { state: string }) => r.state === 'SUCCEEDED')).toBe(true);
    expect(JSON.parse(rows[3].result)).toEqual({ doubled: 6 });
    expect((await status(body.batchTaskId)).body.state).toBe('FINISHED');
  });

  it('stores each element once when two workers run the same chunk at the same time', async () => {
    const parameters = Array.from({ length: 12 }, (_, i) => ({ a: i }));
    const { body } = await submit({ scenarioName: 'double', parameters });
    await finishedStatus(body.batchTaskId);
    // As if a chunk's lock was taken over from a worker that was only slow: both run it again.
    await t.services
      .db('run_results')
      .where({ batch_id: body.batchTaskId })
      .andWhere('element_index', '<', CHUNK)
      .delete();
    await unfinishParts(body.batchTaskId, parameters, 0);
    await t.services.db('batches').where({ id: body.batchTaskId }).update({ finished_at: null });
    const chunk = { batchId: body.batchTaskId, from: 0, to: CHUNK };
    await Promise.all([
      t.services.execution.worker.chunk(chunk, async () => undefined),
      t.services.execution.worker.chunk(chunk, async () => undefined),
    ]);
    const rows = await t.services.db('run_results').where({ batch_id: body.batchTaskId }).select('element_index');
    expect(rows.map((r: { element_index: number }) => r.element_index).sort((a: number, b: number) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    expect((await status(body.batchTaskId)).body).toMatchObject({ state: 'FINISHED', completed: 12 });
  });

  it('answers 413 BATCH_TOO_LARGE above the element limit', async () => {
    const response = await submit({
      scenarioName: 'double',
      parameters: Array.from({ length: MAX_ELEMENTS + 1 }, () => ({ a: 1 })),
    });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('BATCH_TOO_LARGE');
  });

  it('answers 404 when the scenario is unknown or not deployed', async () => {
    expect((await submit({ scenarioName: 'nope', parameters: [{ a: 1 }] })).body.code).toBe('SCENARIO_NOT_FOUND');
    expect((await submit({ scenarioName: 'draft', parameters: [{ a: 1 }] })).body.code).toBe('SCENARIO_NOT_DEPLOYED');
  });

  it('answers 400 for a malformed batch', async () => {
    expect((await submit({ scenarioName: 'double', parameters: [] })).status).toBe(400);
    expect((await submit({ scenarioName: 'double' })).status).toBe(400);
    expect((await submit({ scenarioName: 'double', parameters: [1] })).status).toBe(400);
  });

  it('answers 404 BATCH_NOT_FOUND, not 400, for a batch id that is not one of ours', async () => {
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000', 'x'.repeat(300)]) {
      const response = await status(id);
      expect([id, response.status, response.body.code]).toEqual([id, 404, 'BATCH_NOT_FOUND']);
    }
  });

  it("answers 404 BATCH_NOT_FOUND for an unknown or another user's batch", async () => {
    const { body } = await submit({ scenarioName: 'double', parameters: [{ a: 1 }] });
    const bob = await t.newUser();
    const other = await status(body.batchTaskId, bob.scoreToken);
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('BATCH_NOT_FOUND');
    expect((await status(randomUUID())).status).toBe(404);
    await finishedStatus(body.batchTaskId);
  });

  it('answers 401 without a score token', async () => {
    expect(
      (
        await request(t.app)
          .post('/api/batch/score')
          .send({ scenarioName: 'double', parameters: [{ a: 1 }] })
      ).status,
    ).toBe(401);
    expect((await request(t.app).get(`/api/batch/${randomUUID()}`)).status).toBe(401);
  });
});

describe('a batch of runs that all loop to their time limit', () => {
  it("does not hold up its owner's sync scores: batch elements wait in the engine pool's bulk lane", async () => {
    await deployScenario(t.services.db, alice.id, 'spin', scriptScenario('while (true) {} out = a;'));
    const submitted = await submit({ scenarioName: 'spin', parameters: Array.from({ length: 6 }, (_, a) => ({ a })) });
    expect(submitted.status).toBe(202);
    await waitFor(
      async () => ((await status(submitted.body.batchTaskId)).body.state === 'RUNNING' ? true : undefined),
      10_000,
      20,
    );

    // 6 runs of 1,000 ms each are queued or running on the engine pool now; the owner's scores go first.
    for (let a = 0; a < 5; a++) {
      const begun = Date.now();
      const scored = await request(t.app)
        .post('/api/scenario/code/remote/score')
        .query({ name: 'double', key: alice.scoreToken })
        .send({ a });
      expect(scored.body).toMatchObject({ state: 'SUCCEEDED', result: { doubled: a * 2 } });
      expect(Date.now() - begun).toBeLessThan(500);
    }
    const done = await waitFor(async () => {
      const response = await status(submitted.body.batchTaskId);
      return response.body.state === 'FINISHED' ? response : undefined;
    }, 30_000);
    expect(done.body).toMatchObject({ total: 6, completed: 6, failed: 6 });
  }, 40_000);
});
