import {
  inputParts,
  type BatchElementResult,
  type BatchListing,
  type BatchProgress,
  type BatchRecord,
  type ChunkPart,
  type ChunkRange,
  type ElementOutcome,
  type NewBatch,
} from '../../../src/execution/batch-store.js';
import type { BatchStore } from '../../../src/execution/batch-store-type.js';
import type { HeldRecord } from '../../../src/records/run-recorder.js';
import { parseObject, storedError } from '../../../src/execution/run-columns.js';
import { storedOutcomeTexts } from '../../../src/execution/stored-outcome.js';
import { timeOrderedId } from '../../../src/ids/time-ordered-id.js';
import { copyOf, duplicateKeyError } from '../../support/fake-transactions.js';

interface StoredBatch extends BatchRecord {
  idempotencyKey: string | null;
  bodyHash: Buffer | null;
}
interface StoredPart {
  batchId: string;
  from: number;
  to: number;
  inputs: string;
  queuedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  attempts: number;
  succeeded: number;
  failed: number;
}
interface StoredElement {
  id: string;
  batchId: string;
  index: number;
  state: 'SUCCEEDED' | 'FAILED';
  result: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  errorDetails: string | null;
}

/**
 * BatchStore in memory, for fast service tests; held to the same contract as MySqlBatchStore
 * (batch-store-contract.ts). Inputs are split into parts by the MySQL store's own inputParts, and
 * outcomes kept through storedOutcomeTexts, so its bounds are the MySQL store's. Element results live
 * here only: FakeRunResultStore does not see them (the MySQL stores share run_results).
 */
export class FakeBatchStore implements BatchStore {
  private readonly batches = new Map<string, StoredBatch>();
  private parts: StoredPart[] = [];
  private elements: StoredElement[] = [];

  async insertBatch(batch: NewBatch): Promise<void> {
    const key = batch.idempotency?.key ?? null;
    if (this.batches.has(batch.id)) throw duplicateKeyError(batch.id);
    if (key !== null && [...this.batches.values()].some((b) => b.userId === batch.userId && b.idempotencyKey === key))
      throw duplicateKeyError(`${batch.userId}-${key}`);
    const now = new Date();
    this.batches.set(batch.id, {
      id: batch.id,
      userId: batch.userId,
      scenarioName: batch.scenarioName,
      total: batch.inputs.length,
      chunkCount: Math.ceil(batch.inputs.length / batch.chunkSize),
      createdAt: now,
      finishedAt: null,
      idempotencyKey: key,
      bodyHash: batch.idempotency ? Buffer.from(batch.idempotency.bodyHash) : null,
    });
    for (const part of inputParts(batch)) {
      this.parts.push({
        batchId: batch.id,
        from: part.from,
        to: part.to,
        inputs: part.inputs.toString('utf8'),
        queuedAt: now,
        startedAt: null,
        finishedAt: null,
        attempts: 0,
        succeeded: 0,
        failed: 0,
      });
    }
  }

  async finishedBefore(cutoff: Date, limit: number): Promise<string[]> {
    return [...this.batches.values()]
      .filter((b) => b.finishedAt !== null && b.finishedAt < cutoff)
      .sort((a, b) => a.finishedAt!.getTime() - b.finishedAt!.getTime())
      .slice(0, limit)
      .map((b) => b.id);
  }

  async deleteElements(batchId: string, limit: number): Promise<number> {
    const doomed = new Set(this.elements.filter((e) => e.batchId === batchId).slice(0, limit));
    this.elements = this.elements.filter((e) => !doomed.has(e));
    return doomed.size;
  }

  async deleteBatch(id: string): Promise<void> {
    this.batches.delete(id);
    this.parts = this.parts.filter((p) => p.batchId !== id);
    this.elements = this.elements.filter((e) => e.batchId !== id);
  }

  async findByIdempotencyKey(
    userId: number,
    key: string,
  ): Promise<{ id: string; bodyHash: Buffer | null } | undefined> {
    const found = [...this.batches.values()].find((b) => b.userId === userId && b.idempotencyKey === key);
    return found && { id: found.id, bodyHash: found.bodyHash && Buffer.from(found.bodyHash) };
  }

  async listBatches(userId: number, limit: number, before?: { createdAt: Date; id: string }): Promise<BatchListing[]> {
    const newestFirst = (a: StoredBatch, b: StoredBatch) =>
      b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
    return [...this.batches.values()]
      .filter((b) => b.userId === userId)
      .filter(
        (b) =>
          !before ||
          b.createdAt < before.createdAt ||
          (b.createdAt.getTime() === before.createdAt.getTime() && b.id < before.id),
      )
      .sort(newestFirst)
      .slice(0, limit)
      .map((b) => ({
        ...record(b),
        started: this.partsOf(b.id).some((p) => p.startedAt !== null),
        idempotencyKey: b.idempotencyKey,
      }));
  }

  async findBatch(id: string): Promise<BatchRecord | undefined> {
    const batch = this.batches.get(id);
    return batch && record(batch);
  }

  async chunkWork(range: ChunkRange): Promise<{ batch: BatchRecord; parts: ChunkPart[] } | undefined> {
    const batch = this.batches.get(range.batchId);
    if (!batch) return undefined;
    const parts = this.inRange(range)
      .filter((p) => p.finishedAt === null)
      .map((p) => ({
        from: p.from,
        to: p.to,
        inputs: JSON.parse(p.inputs) as Record<string, unknown>[],
        started: p.startedAt !== null,
        attempts: p.attempts,
      }));
    return { batch: record(batch), parts };
  }

  async markStarted(range: ChunkRange): Promise<void> {
    for (const part of this.inRange(range).filter((p) => p.finishedAt === null)) {
      part.startedAt ??= new Date();
      part.attempts += 1;
    }
  }

  async storedIndexes(range: ChunkRange): Promise<Set<number>> {
    return new Set(this.elementsIn(range.batchId, range.from, range.to).map((e) => e.index));
  }

  /** Decision records are not modelled here (`held` is ignored). */
  async insertResults(batch: BatchRecord, results: ElementOutcome[], _held?: readonly HeldRecord[]): Promise<void> {
    for (const { index, outcome, resultId } of results) {
      if (this.elements.some((e) => e.batchId === batch.id && e.index === index)) continue;
      const texts = storedOutcomeTexts(outcome);
      this.elements.push({
        id: resultId ?? timeOrderedId(),
        batchId: batch.id,
        index,
        state: texts.state,
        result: texts.result,
        errorCode: texts.errorCode,
        errorMessage: texts.errorMessage,
        errorDetails: texts.errorDetails,
      });
    }
  }

  async markPartFinished(batchId: string, part: { from: number; to: number }): Promise<void> {
    const stored = this.parts.find((p) => p.batchId === batchId && p.from === part.from);
    if (!stored) return;
    const elements = this.elementsIn(batchId, part.from, part.to);
    Object.assign(stored, {
      finishedAt: new Date(),
      inputs: '[]',
      succeeded: Math.max(stored.succeeded, elements.filter((e) => e.state === 'SUCCEEDED').length),
      failed: Math.max(stored.failed, elements.filter((e) => e.state === 'FAILED').length),
    });
  }

  async finishIfComplete(batchId: string): Promise<boolean> {
    const batch = this.batches.get(batchId);
    if (!batch || batch.finishedAt !== null || this.partsOf(batchId).some((p) => p.finishedAt === null)) return false;
    batch.finishedAt = new Date();
    return true;
  }

  async batchProgress(batchId: string): Promise<{ batch: BatchRecord; progress: BatchProgress } | undefined> {
    const batch = this.batches.get(batchId);
    if (!batch) return undefined;
    const progress: BatchProgress = { succeeded: 0, failed: 0, started: false };
    for (const part of this.partsOf(batchId)) {
      if (part.startedAt !== null) progress.started = true;
      if (part.finishedAt !== null) {
        progress.succeeded += part.succeeded;
        progress.failed += part.failed;
      } else if (part.startedAt !== null) {
        for (const element of this.elementsIn(batchId, part.from, part.to))
          progress[element.state === 'SUCCEEDED' ? 'succeeded' : 'failed'] += 1;
      }
    }
    return { batch: record(batch), progress };
  }

  async pendingElements(): Promise<number> {
    const open = [...this.batches.values()].filter((b) => b.finishedAt === null);
    return open.reduce((sum, b) => sum + b.total - this.elements.filter((e) => e.batchId === b.id).length, 0);
  }

  async resultIds(batchId: string): Promise<string[]> {
    return this.elementsIn(batchId, 0, Infinity).map((e) => e.id);
  }

  async *results(batchId: string, pageSize: number): AsyncGenerator<BatchElementResult[]> {
    const all = this.elementsIn(batchId, 0, Infinity);
    for (let from = 0; from < all.length; from += pageSize) {
      yield all.slice(from, from + pageSize).map((e) => ({
        index: e.index,
        resultId: e.id,
        state: e.state,
        result: e.state === 'SUCCEEDED' ? parseObject(e.result) : null,
        error: storedError({
          state: e.state,
          error_code: e.errorCode,
          error_message: e.errorMessage,
          error_details: e.errorDetails,
        }),
      }));
    }
  }

  async stalledChunks(cutoff: Date, limit: number): Promise<ChunkRange[]> {
    return this.parts
      .filter((p) => p.finishedAt === null && p.queuedAt < cutoff)
      .slice(0, limit)
      .map((p) => ({ batchId: p.batchId, from: p.from, to: p.to }));
  }

  async claimStalled(cutoff: Date, chunk: ChunkRange): Promise<boolean> {
    const part = this.parts.find(
      (p) => p.batchId === chunk.batchId && p.from === chunk.from && p.finishedAt === null && p.queuedAt < cutoff,
    );
    if (!part) return false;
    part.queuedAt = new Date();
    return true;
  }

  private partsOf(batchId: string): StoredPart[] {
    return this.parts.filter((p) => p.batchId === batchId).sort((a, b) => a.from - b.from);
  }

  private inRange(range: ChunkRange): StoredPart[] {
    return this.partsOf(range.batchId).filter((p) => p.from >= range.from && p.from < range.to);
  }

  private elementsIn(batchId: string, from: number, to: number): StoredElement[] {
    return this.elements
      .filter((e) => e.batchId === batchId && e.index >= from && e.index < to)
      .sort((a, b) => a.index - b.index);
  }
}

function record({ idempotencyKey: _key, bodyHash: _hash, ...batch }: StoredBatch): BatchRecord {
  return copyOf(batch);
}
