import type { HeldRecord } from '../records/run-recorder.js';
import type {
  BatchElementResult,
  BatchListing,
  BatchProgress,
  BatchRecord,
  ChunkPart,
  ChunkRange,
  ElementOutcome,
  NewBatch,
} from './batch-store.js';

/**
 * What execution stores of a batch: the batch, its inputs in parts (one or a few per chunk), and each
 * element's result once it finished. Implemented over MySQL by MySqlBatchStore (batch-store.ts, which
 * also holds the record types); tests run one contract suite on it and on an in-memory fake
 * (test/execution/support/), so service tests on the fake mean something.
 */
export interface BatchStore {
  /** The batch and its inputs, all or nothing; a batch id, or an idempotency key the user already used, fails with an error `isDuplicateKey` recognises. */
  insertBatch(batch: NewBatch): Promise<void>;
  /** Up to `limit` batches that finished before `cutoff`, oldest first. */
  finishedBefore(cutoff: Date, limit: number): Promise<string[]>;
  /** Deletes up to `limit` of a batch's element results; answers how many. */
  deleteElements(batchId: string, limit: number): Promise<number>;
  /** Deletes the batch with its parts and element results. */
  deleteBatch(id: string): Promise<void>;
  /** The user's batch submitted with this idempotency key, with the hash of the body it came with. */
  findByIdempotencyKey(userId: number, key: string): Promise<{ id: string; bodyHash: Buffer | null } | undefined>;
  /** A page of the user's batches, newest first by (createdAt, id), after `before` when given. */
  listBatches(userId: number, limit: number, before?: { createdAt: Date; id: string }): Promise<BatchListing[]>;
  findBatch(id: string): Promise<BatchRecord | undefined>;
  /** The batch and its unfinished parts whose first element lies in [from, to), in element order; undefined when the batch is gone. */
  chunkWork(range: ChunkRange): Promise<{ batch: BatchRecord; parts: ChunkPart[] } | undefined>;
  /** Marks the unfinished parts of the range started (the first time) and counts this start of each. */
  markStarted(range: ChunkRange): Promise<void>;
  /** Indexes in [from, to) whose result is already stored. */
  storedIndexes(range: ChunkRange): Promise<Set<number>>;
  /**
   * Stores finished elements under their result ids (new ones when not given), with the decision records `held`
   * for them in the same transaction (docs/adr/0009); an element stored already keeps its first result, and
   * only elements this call stored get their records.
   */
  insertResults(batch: BatchRecord, results: ElementOutcome[], held?: readonly HeldRecord[]): Promise<void>;
  /** Marks the part that starts at `part.from` finished, its inputs dropped, with its counts of stored results (counts never shrink). */
  markPartFinished(batchId: string, part: { from: number; to: number }): Promise<void>;
  /** Marks the batch finished when none of its parts is unfinished; true when this call did. */
  finishIfComplete(batchId: string): Promise<boolean>;
  /** The batch and its progress: finished parts by their counts, started ones by their stored results. */
  batchProgress(batchId: string): Promise<{ batch: BatchRecord; progress: BatchProgress } | undefined>;
  /** Elements of all unfinished batches (every user's) whose results are not stored yet. */
  pendingElements(): Promise<number>;
  /** The result ids of the stored elements, in element order. */
  resultIds(batchId: string): Promise<string[]>;
  /** Every stored element result in element order, at most `pageSize` per page. */
  results(batchId: string, pageSize: number): AsyncGenerator<BatchElementResult[]>;
  /** Up to `limit` unfinished parts queued before `cutoff`: the stalled-work sweeper's candidates. */
  stalledChunks(cutoff: Date, limit: number): Promise<ChunkRange[]>;
  /** Claims a stalled part (its queue time becomes now); false when another sweeper was first or it finished meanwhile. */
  claimStalled(cutoff: Date, chunk: ChunkRange): Promise<boolean>;
}
