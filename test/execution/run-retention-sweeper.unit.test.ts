import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { RunOutcome } from '../../src/execution/run-outcome.js';
import { RunRetentionSweeper } from '../../src/execution/run-retention-sweeper.js';
import { createLogger } from '../../src/logger.js';
import { FakeBatchStore } from './support/fake-batch-store.js';
import { FakeRunResultStore } from './support/fake-run-result-store.js';

/** The retention sweep's rules on the in-memory stores (held to the MySQL stores' contracts). test/execution/run-retention.test.ts runs it end to end. */
const DAY = 86_400_000;
const done: RunOutcome = {
  state: 'SUCCEEDED',
  result: { ok: true },
  error: null,
  version: '1',
  beganAt: new Date(),
  endedAt: new Date(),
};

async function stores() {
  const runs = new FakeRunResultStore();
  const batches = new FakeBatchStore();
  const asyncRun = async (callback: boolean, finished: boolean) => {
    const run = {
      id: randomUUID(),
      userId: 1,
      requestId: randomUUID(),
      scenarioName: 's',
      input: {},
      callback: callback ? { url: 'http://127.0.0.1:9/', retryCount: 1, retryDelaySeconds: 1 } : null,
    };
    await runs.insertAsyncRun(run);
    if (finished) await runs.finishRuns([{ run: { ...run, batchId: null, elementIndex: null }, outcome: done }]);
    return run.id;
  };
  const batch = async (elements: number, finished: boolean) => {
    const id = randomUUID();
    await batches.insertBatch({
      id,
      userId: 1,
      scenarioName: 's',
      chunkSize: elements,
      inputs: Array.from({ length: elements }, (_, i) => ({ i })),
    });
    const record = (await batches.findBatch(id))!;
    await batches.insertResults(
      record,
      Array.from({ length: elements }, (_, index) => ({ index, outcome: done })),
    );
    if (finished) {
      await batches.markPartFinished(id, { from: 0, to: elements });
      await batches.finishIfComplete(id);
    }
    return id;
  };
  return { runs, batches, asyncRun, batch };
}

describe('RunRetentionSweeper on the in-memory stores', () => {
  it('deletes finished async runs and finished batches past the retention, in statements of at most batchSize rows', async () => {
    const { runs, batches, asyncRun, batch } = await stores();
    const finished = await Promise.all([asyncRun(false, true), asyncRun(false, true), asyncRun(false, true)]);
    const unfinished = await asyncRun(false, false);
    const pendingCallback = await asyncRun(true, true);
    const [oldBatch, runningBatch] = [await batch(5, true), await batch(3, false)];
    const sweeper = new RunRetentionSweeper(
      runs,
      batches,
      { retentionDays: 7, everyMs: 60_000, batchSize: 2, pauseMs: 0 },
      createLogger('silent'),
    );

    expect(await sweeper.sweepOnce(new Date(Date.now() + 6 * DAY))).toEqual({ runs: 0, batches: 0 });
    expect(await sweeper.sweepOnce(new Date(Date.now() + 8 * DAY))).toEqual({ runs: 3, batches: 1 });
    expect(await runs.findByIds(finished)).toEqual([]);
    expect((await runs.findById(unfinished))?.state).toBe('QUEUED');
    expect((await runs.findById(pendingCallback))?.callback?.state).toBe('PENDING');
    expect(await batches.findBatch(oldBatch)).toBeUndefined();
    expect(await batches.resultIds(oldBatch)).toEqual([]);
    expect(await batches.resultIds(runningBatch)).toHaveLength(3);
  });

  it('keeps a run whose callback is still being delivered until delivery ends', async () => {
    const { runs, batches, asyncRun } = await stores();
    const id = await asyncRun(true, true);
    const sweeper = new RunRetentionSweeper(
      runs,
      batches,
      { retentionDays: 1, everyMs: 60_000, pauseMs: 0 },
      createLogger('silent'),
    );
    const later = new Date(Date.now() + 2 * DAY);
    expect(await sweeper.sweepOnce(later)).toEqual({ runs: 0, batches: 0 });
    await runs.setCallbackState(id, 'FAILED');
    expect(await sweeper.sweepOnce(later)).toEqual({ runs: 1, batches: 0 });
  });
});
