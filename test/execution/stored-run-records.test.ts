import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { allStoredRecords } from '../records/stored-records.js';
import { aRecord } from '../records/record-fixture.js';
import { MadeRecord } from '../../src/records/stored-run-records.js';
import type { ElementOutcome } from '../../src/execution/batch-store.js';
import { isolateJobStore } from './support.js';

/**
 * Issue 27, problem 8: decision records of stored runs (async runs, batch elements) = runs, exactly
 * once. Their records are written in the transaction that stores their outcomes, so a process killed
 * after storing outcomes cannot lose their records (the buffered recorder held them for its next
 * insert), a run stored by two workers at once is recorded once, and an abandoned run is recorded as
 * any failed run. No worker runs in this file: the jobs are run by hand.
 */
let t: TestApp;
let alice: TestUser;
let scenarioId: number;

beforeAll(async () => {
  isolateJobStore('stored-run-records');
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  scenarioId = (
    (await t.services.db('scenarios').where({ owner_id: alice.id, name: 'double' }).first('id')) as { id: number }
  ).id;
});
afterEach(() => {
  jest.restoreAllMocks();
});
afterAll(() => t.close());

/** The records stored for these ids (the buffered recorder flushed first, so nothing it holds is missed). */
async function recordsOf(ids: string[]) {
  await t.services.records.recorder.flush();
  const wanted = new Set(ids);
  return (await allStoredRecords(t.services.db, scenarioId)).filter((record) => wanted.has(record.id));
}

async function queuedAsyncRun(
  a: number,
  callback: { url: string; retryCount: number; retryDelaySeconds: number } | null = null,
): Promise<string> {
  const id = randomUUID();
  await t.services.execution.store.insertAsyncRun({
    id,
    userId: alice.id,
    requestId: `stored-${id}`,
    scenarioName: 'double',
    input: { a },
    callback,
  });
  return id;
}

/** Holds every engine run until `count` have started: so many "workers" run at once before any stores its outcome. */
function runTogether(count: number): { started: () => number } {
  const { engine } = t.services;
  const run = engine.run.bind(engine);
  let arrived = 0;
  let allArrived: () => void = () => undefined;
  const barrier = new Promise<void>((resolve) => {
    allArrived = resolve;
  });
  jest.spyOn(engine, 'run').mockImplementation(async (...args) => {
    arrived += 1;
    if (arrived === count) allArrived();
    await barrier;
    return run(...args);
  });
  return { started: () => arrived };
}

async function newBatch(size: number): Promise<string> {
  const batchId = randomUUID();
  await t.services.execution.batchStore.insertBatch({
    id: batchId,
    userId: alice.id,
    scenarioName: 'double',
    chunkSize: size,
    inputs: Array.from({ length: size }, (_, a) => ({ a })),
  });
  return batchId;
}

const resultIdsOf = async (batchId: string) =>
  ((await t.services.db('run_results').where({ batch_id: batchId }).select('id')) as Array<{ id: string }>).map(
    (row) => row.id,
  );

/** What a process killed with SIGKILL loses: every record its buffered recorder held and had not inserted yet. */
function recorderKilledBeforeItsNextInsert(): void {
  jest.spyOn(t.services.records.recorder, 'record').mockImplementation(() => undefined);
}

describe('records of stored runs, written with their outcomes', () => {
  it('keeps the record of an async run whose process dies right after storing its outcome', async () => {
    const id = await queuedAsyncRun(4);
    recorderKilledBeforeItsNextInsert();
    await t.services.execution.worker.run({ resultIds: [id] });
    jest.restoreAllMocks();
    const records = await recordsOf([id]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      mode: 'ASYNC',
      state: 'SUCCEEDED',
      result: { doubled: 8 },
      requestId: `stored-${id}`,
    });
  });

  it('keeps the records of batch elements whose process dies right after storing their results', async () => {
    const batchId = await newBatch(30);
    recorderKilledBeforeItsNextInsert();
    expect(await t.services.execution.worker.chunk({ batchId, from: 0, to: 30 }, async () => undefined)).toBe(true);
    jest.restoreAllMocks();
    const ids = await resultIdsOf(batchId);
    expect(ids).toHaveLength(30);
    const records = await recordsOf(ids);
    expect(records.map((record) => record.id).sort()).toEqual([...ids].sort());
    expect(records.every((record) => record.mode === 'BATCH' && record.batchId === batchId)).toBe(true);
  });

  it('writes no record when the outcome’s transaction fails, and one when the job runs again', async () => {
    const batchId = await newBatch(10);
    const { db } = t.services;
    // The results' transaction fails after its rows and records were written (MySQL went away before the commit).
    const { storedRunRecords } = t.services.records;
    const write = storedRunRecords.write.bind(storedRunRecords);
    const spy = jest.spyOn(storedRunRecords, 'write').mockImplementationOnce(async (trx, records) => {
      await write(trx, records);
      throw Object.assign(new Error('Connection lost: The server closed the connection.'), {
        fatal: true,
        code: 'PROTOCOL_CONNECTION_LOST',
      });
    });
    await expect(
      t.services.execution.worker.chunk({ batchId, from: 0, to: 10 }, async () => undefined),
    ).rejects.toThrow('Connection lost');
    expect(spy).toHaveBeenCalled();
    spy.mockRestore();
    expect(await resultIdsOf(batchId)).toHaveLength(0);
    expect((await allStoredRecords(db, scenarioId)).filter((record) => record.batchId === batchId)).toHaveLength(0);
    expect(await t.services.execution.worker.chunk({ batchId, from: 0, to: 10 }, async () => undefined)).toBe(true);
    const ids = await resultIdsOf(batchId);
    expect(ids).toHaveLength(10);
    expect((await recordsOf(ids)).map((record) => record.id).sort()).toEqual([...ids].sort());
  });

  it('records a batch element once when its chunk is run by two workers at once (a lock taken over from a slow worker)', async () => {
    const batchId = await newBatch(20);
    const { batchStore, worker } = t.services.execution;
    // Both "workers" have run every element before either stores a result.
    const insertResults = batchStore.insertResults.bind(batchStore);
    let arrived = 0;
    let bothArrived: () => void = () => undefined;
    const barrier = new Promise<void>((resolve) => {
      bothArrived = resolve;
    });
    jest.spyOn(batchStore, 'insertResults').mockImplementation(async (...args) => {
      arrived += 1;
      if (arrived === 2) bothArrived();
      await barrier;
      return insertResults(...args);
    });
    const [first, second] = await Promise.all([
      worker.chunk({ batchId, from: 0, to: 20 }, async () => undefined),
      worker.chunk({ batchId, from: 0, to: 20 }, async () => undefined),
    ]);
    expect([first, second]).toEqual([true, true]);
    expect(arrived).toBe(2);
    const ids = await resultIdsOf(batchId);
    expect(ids).toHaveLength(20);
    const batchRecords = (await allStoredRecords(t.services.db, scenarioId)).filter(
      (record) => record.batchId === batchId,
    );
    expect(batchRecords).toHaveLength(20);
    expect(batchRecords.map((record) => record.id).sort()).toEqual([...ids].sort());
  });

  it('records only the elements a slice stored when some of them were stored before (a statement that met duplicate keys)', async () => {
    const batchId = await newBatch(6);
    const { batchStore } = t.services.execution;
    const batch = await batchStore.findBatch(batchId);
    if (!batch) throw new Error('no batch');
    /** An element's outcome and its held record, under a new result id. */
    const element = (index: number): { outcome: ElementOutcome; held: MadeRecord } => {
      const resultId = randomUUID();
      const beganAt = new Date();
      return {
        outcome: {
          index,
          resultId,
          outcome: { state: 'SUCCEEDED', result: { b: index }, error: null, version: '1', beganAt, endedAt: beganAt },
        },
        held: new MadeRecord(
          aRecord(scenarioId, { id: resultId, requestId: resultId, mode: 'BATCH', batchId, ownerId: alice.id }),
        ),
      };
    };
    const insert = (elements: Array<ReturnType<typeof element>>) =>
      batchStore.insertResults(
        batch,
        elements.map((e) => e.outcome),
        elements.map((e) => e.held),
      );
    const first = [0, 1, 2].map(element);
    await insert(first);
    // Elements 0–2 again (under new result ids: a chunk run twice at once), with three new ones, in one statement.
    const second = [0, 1, 2, 3, 4, 5].map(element);
    await insert(second);
    const stored = [...first, ...second.slice(3)].map((e) => e.outcome.resultId as string).sort();
    expect((await resultIdsOf(batchId)).sort()).toEqual(stored);
    const recorded = await recordsOf([...first, ...second].map((e) => e.outcome.resultId as string));
    expect(recorded.map((record) => record.id).sort()).toEqual(stored);
  });

  it('records every element of a slice whose rows were all new, without reading them back', async () => {
    const batchId = await newBatch(4);
    const { batchStore } = t.services.execution;
    const batch = await batchStore.findBatch(batchId);
    if (!batch) throw new Error('no batch');
    const resultIds = [0, 1, 2, 3].map(() => randomUUID());
    const beganAt = new Date();
    const reads: string[] = [];
    const listen = (query: { sql: string }) => {
      if (/^select/i.test(query.sql) && query.sql.includes('run_results')) reads.push(query.sql);
    };
    t.services.db.on('query', listen);
    try {
      await batchStore.insertResults(
        batch,
        resultIds.map((resultId, index) => ({
          index,
          resultId,
          outcome: { state: 'SUCCEEDED', result: { b: index }, error: null, version: '1', beganAt, endedAt: beganAt },
        })),
        resultIds.map(
          (resultId) =>
            new MadeRecord(
              aRecord(scenarioId, { id: resultId, requestId: resultId, mode: 'BATCH', batchId, ownerId: alice.id }),
            ),
        ),
      );
    } finally {
      t.services.db.off('query', listen);
    }
    expect(reads).toEqual([]);
    expect((await recordsOf(resultIds)).map((record) => record.id).sort()).toEqual([...resultIds].sort());
  });

  it('records an async run once when two workers finish it at once, keeps its first outcome and schedules one callback', async () => {
    const id = await queuedAsyncRun(6, { url: 'http://127.0.0.1:9/hook', retryCount: 0, retryDelaySeconds: 1 });
    const { worker, queue } = t.services.execution;
    // Both "workers" run it before either stores its outcome.
    const together = runTogether(2);
    const callbacks = jest.spyOn(queue, 'scheduleCallback').mockResolvedValue(undefined);
    await Promise.all([worker.run({ resultIds: [id] }), worker.run({ resultIds: [id] })]);
    expect(together.started()).toBe(2);
    // The first to store it schedules its callback; the other leaves it.
    expect(callbacks.mock.calls.filter(([resultId]) => resultId === id)).toEqual([[id, 1, 0]]);
    const records = await recordsOf([id]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ state: 'SUCCEEDED', result: { doubled: 12 } });
  });
});

describe('records of abandoned runs', () => {
  it('records an async run given up after RUN_MAX_ATTEMPTS starts as a failed run, RUN_ABANDONED', async () => {
    const id = await queuedAsyncRun(5);
    await t.services.db('run_results').where({ id }).update({ attempts: t.services.execution.settings.maxRunAttempts });
    await t.services.execution.worker.run({ resultIds: [id] });
    expect(await t.services.db('run_results').where({ id }).first('state', 'error_code')).toEqual({
      state: 'FAILED',
      error_code: 'RUN_ABANDONED',
    });
    const records = await recordsOf([id]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      mode: 'ASYNC',
      state: 'FAILED',
      inputs: { a: 5 },
      result: null,
      error: { code: 'RUN_ABANDONED' },
    });
  });

  it('records each element of a batch part given up after RUN_MAX_ATTEMPTS starts, RUN_ABANDONED', async () => {
    const batchId = await newBatch(5);
    await t.services
      .db('batch_chunks')
      .where({ batch_id: batchId })
      .update({ attempts: t.services.execution.settings.maxRunAttempts, started_at: t.services.db.fn.now(3) });
    expect(await t.services.execution.worker.chunk({ batchId, from: 0, to: 5 }, async () => undefined)).toBe(true);
    const ids = await resultIdsOf(batchId);
    expect(ids).toHaveLength(5);
    const records = await recordsOf(ids);
    expect(records.map((record) => record.id).sort()).toEqual([...ids].sort());
    expect(
      records.every(
        (record) => record.state === 'FAILED' && record.error?.code === 'RUN_ABANDONED' && record.batchId === batchId,
      ),
    ).toBe(true);
    expect(records.map((record) => record.inputs.a).sort()).toEqual([0, 1, 2, 3, 4]);
  });
});
