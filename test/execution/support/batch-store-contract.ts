import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { isDuplicateKey } from '../../../src/db/mysql-errors.js';
import type { BatchStore } from '../../../src/execution/batch-store-type.js';
import type { ElementOutcome } from '../../../src/execution/batch-store.js';

/** What the fake and the MySQL store both promise (one suite, every implementation). */
export interface BatchStoreUnderTest {
  store: BatchStore;
  newOwner(): Promise<number>;
}

const HOUR = 3_600_000;
const later = () => new Date(Date.now() + HOUR);
const earlier = () => new Date(Date.now() - HOUR);
const inputs = (n: number) => Array.from({ length: n }, (_, i) => ({ i, name: `it's #${i}` }));
const outcome = (state: 'SUCCEEDED' | 'FAILED', i = 0): ElementOutcome['outcome'] =>
  state === 'SUCCEEDED'
    ? { state, result: { doubled: i * 2 }, error: null, version: '1', beganAt: new Date(), endedAt: new Date() }
    : {
        state,
        result: null,
        error: { code: 'SCRIPT_ERROR', message: "it's broken", nodeId: 'n' },
        version: '1',
        beganAt: new Date(),
        endedAt: new Date(),
      };

export function batchStoreContract(label: string, setUp: () => BatchStoreUnderTest): void {
  describe(`${label} (BatchStore contract)`, () => {
    async function newBatch(
      store: BatchStore,
      userId: number,
      count: number,
      chunkSize: number,
      key?: string,
    ): Promise<string> {
      const id = randomUUID();
      await store.insertBatch({
        id,
        userId,
        scenarioName: 'double',
        chunkSize,
        inputs: inputs(count),
        idempotency: key ? { key, bodyHash: createHash('sha256').update(key).digest() } : undefined,
      });
      return id;
    }

    it('stores a batch with its inputs in chunk parts, read back in element order; nothing for a batch that is gone', async () => {
      const { store, newOwner } = setUp();
      const user = await newOwner();
      const id = await newBatch(store, user, 7, 3);
      const batch = await store.findBatch(id);
      expect(batch).toEqual({
        id,
        userId: user,
        scenarioName: 'double',
        total: 7,
        chunkCount: 3,
        createdAt: expect.any(Date),
        finishedAt: null,
      });
      const work = await store.chunkWork({ batchId: id, from: 0, to: 7 });
      expect(work?.batch).toEqual(batch);
      expect(work?.parts.map((p) => [p.from, p.to, p.started, p.attempts])).toEqual([
        [0, 3, false, 0],
        [3, 6, false, 0],
        [6, 7, false, 0],
      ]);
      expect(work?.parts.flatMap((p) => p.inputs)).toEqual(inputs(7));
      expect((await store.chunkWork({ batchId: id, from: 3, to: 6 }))?.parts.map((p) => p.from)).toEqual([3]);
      const gone = randomUUID();
      expect(await store.findBatch(gone)).toBeUndefined();
      expect(await store.chunkWork({ batchId: gone, from: 0, to: 3 })).toBeUndefined();
      expect(await store.batchProgress(gone)).toBeUndefined();
    });

    it('refuses an idempotency key the user already used with a duplicate-key error, storing nothing; another user may use it', async () => {
      const { store, newOwner } = setUp();
      const [user, other] = [await newOwner(), await newOwner()];
      const key = `key-${randomUUID()}`;
      const first = await newBatch(store, user, 2, 2, key);
      const second = randomUUID();
      const refusal = await store
        .insertBatch({
          id: second,
          userId: user,
          scenarioName: 'double',
          chunkSize: 2,
          inputs: inputs(2),
          idempotency: { key, bodyHash: Buffer.alloc(32) },
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(isDuplicateKey(refusal)).toBe(true);
      expect(await store.findBatch(second)).toBeUndefined();
      expect(await store.chunkWork({ batchId: second, from: 0, to: 2 })).toBeUndefined();
      expect(await store.findByIdempotencyKey(user, key)).toEqual({
        id: first,
        bodyHash: createHash('sha256').update(key).digest(),
      });
      expect(await store.findByIdempotencyKey(user, 'another key')).toBeUndefined();
      await newBatch(store, other, 1, 1, key);
    });

    it('counts the starts of unfinished parts, and stores each element once, under the result id given', async () => {
      const { store, newOwner } = setUp();
      const id = await newBatch(store, await newOwner(), 4, 2);
      await store.markStarted({ batchId: id, from: 0, to: 2 });
      await store.markStarted({ batchId: id, from: 0, to: 2 });
      expect(
        (await store.chunkWork({ batchId: id, from: 0, to: 4 }))?.parts.map((p) => [p.from, p.started, p.attempts]),
      ).toEqual([
        [0, true, 2],
        [2, false, 0],
      ]);
      const batch = (await store.findBatch(id))!;
      const chosen = randomUUID();
      await store.insertResults(batch, [
        { index: 1, outcome: outcome('FAILED') },
        { index: 0, outcome: outcome('SUCCEEDED', 0), resultId: chosen },
      ]);
      await store.insertResults(batch, [
        { index: 0, outcome: outcome('FAILED') },
        { index: 3, outcome: outcome('SUCCEEDED', 3) },
      ]);
      await store.insertResults(batch, []);
      expect([...(await store.storedIndexes({ batchId: id, from: 0, to: 2 }))].sort()).toEqual([0, 1]);
      expect([...(await store.storedIndexes({ batchId: id, from: 2, to: 4 }))]).toEqual([3]);
      const ids = await store.resultIds(id);
      expect(ids).toHaveLength(3);
      expect(ids[0]).toBe(chosen);
      const pages: unknown[][] = [];
      for await (const page of store.results(id, 2)) pages.push(page);
      expect(pages).toEqual([
        [
          { index: 0, resultId: chosen, state: 'SUCCEEDED', result: { doubled: 0 }, error: null },
          {
            index: 1,
            resultId: ids[1],
            state: 'FAILED',
            result: null,
            error: { code: 'SCRIPT_ERROR', message: "it's broken", nodeId: 'n' },
          },
        ],
        [{ index: 3, resultId: ids[2], state: 'SUCCEEDED', result: { doubled: 6 }, error: null }],
      ]);
    });

    it("answers progress from finished parts' counts and started parts' results, and finishes the batch after its last part", async () => {
      const { store, newOwner } = setUp();
      const id = await newBatch(store, await newOwner(), 6, 2);
      const batch = (await store.findBatch(id))!;
      expect((await store.batchProgress(id))?.progress).toEqual({ succeeded: 0, failed: 0, started: false });
      await store.markStarted({ batchId: id, from: 0, to: 4 });
      await store.insertResults(batch, [
        { index: 0, outcome: outcome('SUCCEEDED') },
        { index: 1, outcome: outcome('FAILED') },
        { index: 2, outcome: outcome('SUCCEEDED') },
      ]);
      expect((await store.batchProgress(id))?.progress).toEqual({ succeeded: 2, failed: 1, started: true });
      await store.markPartFinished(id, { from: 0, to: 2 });
      expect((await store.chunkWork({ batchId: id, from: 0, to: 6 }))?.parts.map((p) => p.from)).toEqual([2, 4]);
      expect((await store.batchProgress(id))?.progress).toEqual({ succeeded: 2, failed: 1, started: true });
      expect(await store.finishIfComplete(id)).toBe(false);
      await store.insertResults(batch, [
        { index: 3, outcome: outcome('SUCCEEDED') },
        { index: 4, outcome: outcome('SUCCEEDED') },
        { index: 5, outcome: outcome('FAILED') },
      ]);
      await store.markPartFinished(id, { from: 2, to: 4 });
      await store.markPartFinished(id, { from: 4, to: 6 });
      expect((await store.batchProgress(id))?.progress).toEqual({ succeeded: 4, failed: 2, started: true });
      expect(await store.finishIfComplete(id)).toBe(true);
      expect(await store.finishIfComplete(id)).toBe(false);
      expect((await store.findBatch(id))?.finishedAt).toBeInstanceOf(Date);
    });

    it('counts the elements of unfinished batches still without a result', async () => {
      const { store, newOwner } = setUp();
      const before = await store.pendingElements();
      const id = await newBatch(store, await newOwner(), 4, 4);
      expect(await store.pendingElements()).toBe(before + 4);
      const batch = (await store.findBatch(id))!;
      await store.insertResults(batch, [{ index: 0, outcome: outcome('SUCCEEDED') }]);
      expect(await store.pendingElements()).toBe(before + 3);
      await store.insertResults(
        batch,
        [1, 2, 3].map((index) => ({ index, outcome: outcome('SUCCEEDED') })),
      );
      await store.markPartFinished(id, { from: 0, to: 4 });
      await store.finishIfComplete(id);
      expect(await store.pendingElements()).toBe(before);
    });

    it("lists the user's batches newest first, a page after another, with whether each has started", async () => {
      const { store, newOwner } = setUp();
      const [user, other] = [await newOwner(), await newOwner()];
      const ids: string[] = [];
      for (let n = 0; n < 3; n += 1) {
        ids.push(await newBatch(store, user, 2, 1, n === 1 ? `key-${randomUUID()}` : undefined));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await newBatch(store, other, 1, 1);
      await store.markStarted({ batchId: ids[0], from: 0, to: 1 });
      const firstPage = await store.listBatches(user, 2);
      expect(firstPage.map((b) => [b.id, b.started, b.idempotencyKey !== null])).toEqual([
        [ids[2], false, false],
        [ids[1], false, true],
      ]);
      const next = await store.listBatches(user, 2, { createdAt: firstPage[1].createdAt, id: firstPage[1].id });
      expect(next.map((b) => [b.id, b.started])).toEqual([[ids[0], true]]);
      expect(next[0]).toMatchObject({
        userId: user,
        scenarioName: 'double',
        total: 2,
        chunkCount: 2,
        finishedAt: null,
      });
    });

    it('answers batches finished before a cut-off, and deletes their elements and then the batch with its parts', async () => {
      const { store, newOwner } = setUp();
      const id = await newBatch(store, await newOwner(), 3, 3);
      const batch = (await store.findBatch(id))!;
      await store.insertResults(
        batch,
        [0, 1, 2].map((index) => ({ index, outcome: outcome('SUCCEEDED') })),
      );
      await store.markPartFinished(id, { from: 0, to: 3 });
      await store.finishIfComplete(id);
      expect(await store.finishedBefore(later(), 100_000)).toContain(id);
      expect(await store.finishedBefore(earlier(), 100_000)).not.toContain(id);
      expect(await store.deleteElements(id, 2)).toBe(2);
      expect(await store.resultIds(id)).toHaveLength(1);
      await store.deleteBatch(id);
      expect(await store.findBatch(id)).toBeUndefined();
      expect(await store.resultIds(id)).toEqual([]);
      expect(await store.chunkWork({ batchId: id, from: 0, to: 3 })).toBeUndefined();
    });

    it('answers unfinished parts queued before the cut-off as stalled, and lets one sweeper claim each', async () => {
      const { store, newOwner } = setUp();
      const id = await newBatch(store, await newOwner(), 4, 2);
      await store.markPartFinished(id, { from: 2, to: 4 });
      const mine = async (cutoff: Date) => (await store.stalledChunks(cutoff, 100_000)).filter((c) => c.batchId === id);
      expect(await mine(later())).toEqual([{ batchId: id, from: 0, to: 2 }]);
      expect(await mine(earlier())).toEqual([]);
      expect(await store.claimStalled(earlier(), { batchId: id, from: 0, to: 2 })).toBe(false);
      expect(await store.claimStalled(later(), { batchId: id, from: 0, to: 2 })).toBe(true);
      expect(await store.claimStalled(later(), { batchId: id, from: 2, to: 4 })).toBe(false);
    });
  });
}
