import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { isDuplicateKey } from '../../../src/db/mysql-errors.js';
import type { RunOutcome } from '../../../src/execution/run-outcome.js';
import { FINISHED_BEFORE, type RunResultStore } from '../../../src/execution/run-result-store-type.js';
import type { NewAsyncRun, RunIdentity } from '../../../src/execution/run-result-store.js';

/** What the fake and the MySQL store both promise (one suite, every implementation). */
export interface RunResultStoreUnderTest {
  store: RunResultStore;
  newOwner(): Promise<number>;
}

const HOUR = 3_600_000;
/** Cut-offs around now (the MySQL store stamps queue times with the server's clock), and far from it. */
const later = () => new Date(Date.now() + HOUR);
const earlier = () => new Date(Date.now() - HOUR);
/** Finish times long past, so that deleting "finished before" never reaches another test file's runs in a shared database. */
const longAgo = (day: number) => new Date(Date.UTC(2001, 0, day));

const newRun = (userId: number, callback = false): NewAsyncRun => ({
  id: randomUUID(),
  userId,
  requestId: randomUUID(),
  scenarioName: 'double',
  input: { x: 1, nested: { y: [1, 'two'] } },
  callback: callback ? { url: 'http://127.0.0.1:9/hook', retryCount: 3, retryDelaySeconds: 5 } : null,
});
const identity = (run: NewAsyncRun): RunIdentity => ({
  id: run.id,
  userId: run.userId,
  requestId: run.requestId,
  scenarioName: run.scenarioName,
  batchId: null,
  elementIndex: null,
});
const succeeded = (result: Record<string, unknown>, endedAt = new Date()): RunOutcome => ({
  state: 'SUCCEEDED',
  result,
  error: null,
  version: '3',
  beganAt: new Date(endedAt.getTime() - 5),
  endedAt,
});
const failed = (endedAt = new Date()): RunOutcome => ({
  state: 'FAILED',
  result: null,
  error: { code: 'NODE_FAILED', message: 'boom', nodeId: 'n1', nodeName: 'Score', nodeType: 'SCRIPT' },
  version: '3',
  beganAt: endedAt,
  endedAt,
});

export function runResultStoreContract(label: string, setUp: () => RunResultStoreUnderTest): void {
  describe(`${label} (RunResultStore contract)`, () => {
    it('stores a QUEUED async run with its input and callback, found by id, by request id and among ids', async () => {
      const { store, newOwner } = setUp();
      const user = await newOwner();
      const run = newRun(user, true);
      await store.insertAsyncRun(run);
      const found = await store.findById(run.id);
      expect(found).toEqual({
        ...identity(run),
        state: 'QUEUED',
        input: run.input,
        result: null,
        error: null,
        version: null,
        callback: { url: 'http://127.0.0.1:9/hook', retryCount: 3, retryDelaySeconds: 5, state: 'PENDING' },
        createdAt: expect.any(Date),
        startedAt: null,
        finishedAt: null,
        attempts: 0,
      });
      expect(await store.findByRequestId(user, run.requestId)).toEqual(found);
      expect(await store.findByRequestId(await newOwner(), run.requestId)).toBeUndefined();
      expect(await store.findByIds([run.id, randomUUID()])).toEqual([found]);
      expect(await store.findByIds([])).toEqual([]);
      expect(await store.findById(randomUUID())).toBeUndefined();
    });

    it('refuses a request id the user already used: one run with a duplicate-key error, a group run by run', async () => {
      const { store, newOwner } = setUp();
      const user = await newOwner();
      const first = newRun(user);
      await store.insertAsyncRun(first);
      const again = { ...newRun(user), requestId: first.requestId };
      expect(
        isDuplicateKey(
          await store.insertAsyncRun(again).then(
            () => undefined,
            (error: unknown) => error,
          ),
        ),
      ).toBe(true);
      const group = [newRun(user), again, newRun(user)];
      expect(await store.insertAsyncRuns(group)).toEqual([true, false, true]);
      expect((await store.findByIds(group.map((r) => r.id))).map((r) => r.id).sort()).toEqual(
        [group[0].id, group[2].id].sort(),
      );
      expect(await store.insertAsyncRuns([newRun(user), newRun(user)])).toEqual([true, true]);
      await store.deleteRuns([group[0].id, group[2].id]);
      expect(await store.findByIds(group.map((r) => r.id))).toEqual([]);
    });

    it('marks unfinished runs RUNNING, counting one attempt per start, and leaves finished ones as they are', async () => {
      const { store, newOwner } = setUp();
      const user = await newOwner();
      const [queued, done] = [newRun(user), newRun(user)];
      await store.insertAsyncRuns([queued, done]);
      await store.finishRuns([{ run: identity(done), outcome: succeeded({ y: 2 }) }]);
      await store.markRunning([queued.id, done.id]);
      const started = await store.findById(queued.id);
      expect(started).toMatchObject({ state: 'RUNNING', attempts: 1, startedAt: expect.any(Date) });
      await store.markRunning([queued.id]);
      expect(await store.findById(queued.id)).toMatchObject({
        state: 'RUNNING',
        attempts: 2,
        startedAt: started?.startedAt,
      });
      expect(await store.findById(done.id)).toMatchObject({ state: 'SUCCEEDED', attempts: 0 });
    });

    it('stores outcomes by result id, dropping the input; a run finished before keeps its first outcome (FINISHED_BEFORE)', async () => {
      const { store, newOwner } = setUp();
      const user = await newOwner();
      const [ok, bad] = [newRun(user), newRun(user)];
      await store.insertAsyncRuns([ok, bad]);
      const endedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
      const outcomes = [
        { run: identity(ok), outcome: succeeded({ score: 0.5, list: [1, 2] }, endedAt) },
        { run: identity(bad), outcome: failed(endedAt) },
      ];
      expect(await store.finishRuns(outcomes)).toEqual([null, null]);
      expect(await store.finishRuns([{ run: identity(ok), outcome: failed(endedAt) }, outcomes[1]])).toEqual([
        FINISHED_BEFORE,
        FINISHED_BEFORE,
      ]);
      expect(await store.finishRuns([])).toEqual([]);
      expect(await store.findById(ok.id)).toMatchObject({
        state: 'SUCCEEDED',
        input: null,
        result: { score: 0.5, list: [1, 2] },
        error: null,
        version: '3',
        finishedAt: endedAt,
      });
      expect(await store.findById(bad.id)).toMatchObject({
        state: 'FAILED',
        input: null,
        result: null,
        finishedAt: endedAt,
        error: { code: 'NODE_FAILED', message: 'boom', nodeId: 'n1', nodeName: 'Score', nodeType: 'SCRIPT' },
      });
    });

    it('stores the outcome of a run it never held (a first write)', async () => {
      const { store, newOwner } = setUp();
      const run = newRun(await newOwner());
      expect(await store.finishRuns([{ run: identity(run), outcome: succeeded({ z: true }) }])).toEqual([null]);
      expect(await store.findById(run.id)).toMatchObject({
        ...identity(run),
        state: 'SUCCEEDED',
        input: null,
        result: { z: true },
        callback: null,
      });
    });

    it('answers unfinished async runs queued before the cut-off as stalled, and lets one sweeper claim each', async () => {
      const { store, newOwner } = setUp();
      const user = await newOwner();
      const [queued, running, done] = [newRun(user), newRun(user), newRun(user)];
      await store.insertAsyncRuns([queued, running, done]);
      await store.markRunning([running.id]);
      await store.finishRuns([{ run: identity(done), outcome: succeeded({}) }]);
      const mine = (ids: string[]) => ids.filter((id) => [queued.id, running.id, done.id].includes(id)).sort();
      expect(mine(await store.stalledRuns(later(), 100_000))).toEqual([queued.id, running.id].sort());
      expect(mine(await store.stalledRuns(earlier(), 100_000))).toEqual([]);
      const cutoff = later();
      expect(await store.claimStalled(cutoff, queued.id)).toBe(true);
      expect(await store.claimStalled(earlier(), running.id)).toBe(false);
      expect(await store.claimStalled(cutoff, done.id)).toBe(false);
      // Claimed: queued again now, so no longer before a cut-off taken earlier than the claim.
      expect(mine(await store.stalledRuns(earlier(), 100_000))).toEqual([]);
    });

    it('answers finished runs whose callback is pending, with the attempts made, until the callback ends', async () => {
      const { store, newOwner } = setUp();
      const user = await newOwner();
      const [pending, unfinished, without] = [newRun(user, true), newRun(user, true), newRun(user)];
      await store.insertAsyncRuns([pending, unfinished, without]);
      await store.finishRuns([
        { run: identity(pending), outcome: succeeded({}) },
        { run: identity(without), outcome: succeeded({}) },
      ]);
      await store.recordCallbackAttempt(pending.id, { attempt: 1, httpStatus: 503, error: 'x'.repeat(1500) });
      await store.recordCallbackAttempt(pending.id, { attempt: 2, httpStatus: null, error: 'connect ECONNREFUSED' });
      expect(await store.callbackAttempts(pending.id)).toEqual([
        { attempt: 1, httpStatus: 503, error: 'x'.repeat(1000) },
        { attempt: 2, httpStatus: null, error: 'connect ECONNREFUSED' },
      ]);
      const ids = [pending.id, unfinished.id, without.id];
      const mine = async (cutoff: Date) =>
        (await store.pendingCallbacks(cutoff, 100_000)).filter((c) => ids.includes(c.id));
      expect(await mine(later())).toEqual([{ id: pending.id, attempts: 2 }]);
      expect(await mine(earlier())).toEqual([]);
      expect(await store.claimCallback(later(), pending.id)).toBe(true);
      expect(await store.claimCallback(later(), without.id)).toBe(false);
      await store.setCallbackState(pending.id, 'DELIVERED');
      expect((await store.findById(pending.id))?.callback?.state).toBe('DELIVERED');
      expect(await mine(later())).toEqual([]);
      expect(await store.claimCallback(later(), pending.id)).toBe(false);
    });

    it('deletes finished async runs, oldest first and with their attempts, but not one whose callback is pending', async () => {
      const { store, newOwner } = setUp();
      const user = await newOwner();
      const [oldest, old, pending, recent, unfinished] = [
        newRun(user, true),
        newRun(user),
        newRun(user, true),
        newRun(user),
        newRun(user),
      ];
      await store.insertAsyncRuns([oldest, old, pending, recent, unfinished]);
      await store.finishRuns([
        { run: identity(old), outcome: failed(longAgo(3)) },
        { run: identity(oldest), outcome: succeeded({}, longAgo(1)) },
        { run: identity(pending), outcome: succeeded({}, longAgo(2)) },
        { run: identity(recent), outcome: succeeded({}) },
      ]);
      await store.recordCallbackAttempt(oldest.id, { attempt: 1, httpStatus: 200, error: null });
      await store.setCallbackState(oldest.id, 'DELIVERED');
      expect(await store.deleteFinishedBefore(longAgo(10), 1)).toBe(1);
      expect(await store.findById(oldest.id)).toBeUndefined();
      expect(await store.callbackAttempts(oldest.id)).toEqual([]);
      expect(await store.deleteFinishedBefore(longAgo(10), 10)).toBe(1);
      expect((await store.findByIds([old.id, pending.id, recent.id, unfinished.id])).map((r) => r.id).sort()).toEqual(
        [pending.id, recent.id, unfinished.id].sort(),
      );
      expect(await store.deleteFinishedBefore(longAgo(10), 10)).toBe(0);
    });
  });
}
