import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { isDuplicateKey } from '../db/mysql-errors.js';
import { ConflictError } from '../errors/conflict-error.js';
import { timeOrderedId } from '../ids/time-ordered-id.js';
import type { AppConfig } from '../config/config.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { decodeBatchCursor, encodeBatchCursor } from './batch-cursor.js';
import type { BatchElementResult, BatchIdempotency, BatchListing, BatchStore } from './batch-store.js';
import type { ExecutionQueue } from './execution-queue.js';
import { jobStoreUnavailable } from './job-store-unavailable.js';
import type { ScenarioRunner } from './scenario-runner.js';
import { PhaseTimes } from './phase-times.js';
import type { ScoringUser } from './scoring-user.js';

export interface BatchStatus {
  batchTaskId: string;
  scenarioName: string;
  state: 'QUEUED' | 'RUNNING' | 'FINISHED';
  total: number;
  completed: number;
  failed: number;
  createdAt: string;
  finishedAt: string | null;
  resultsIds: string[];
}

/** A finished batch's results as pages of lines in element order, or its status while unfinished. */
export type BatchResults =
  | { finished: true; pages: AsyncIterable<BatchElementResult[]> }
  | { finished: false; status: BatchStatus };

/** One batch of listBatches (schema BatchSummary). */
export interface BatchSummary {
  batchTaskId: string;
  scenarioName: string;
  state: 'QUEUED' | 'RUNNING' | 'FINISHED';
  total: number;
  createdAt: string;
  finishedAt: string | null;
  idempotencyKey: string | null;
}

/** Lines read per query while streaming results. */
const RESULT_PAGE = 2000;

/** The API side of batches: submit, status, results. */
export class BatchService {
  constructor(
    private readonly config: AppConfig,
    private readonly runner: ScenarioRunner,
    private readonly store: BatchStore,
    private readonly queue: ExecutionQueue,
    private readonly logger: Logger,
  ) {}

  /**
   * Stores the batch with its inputs (one transaction), then enqueues one job per chunk; answers the
   * batch id. With an idempotency key, a batch the user submitted with that key before is answered
   * instead (nothing new is queued) when the body is the same, and 409 IDEMPOTENCY_KEY_REUSED when it
   * is not; two such submissions at once store one batch (the key is unique per user). `batchId` is new unless the
   * caller names one: the example seeder does, so the batch id the spec's examples name exists on a new install.
   */
  async submit(
    caller: ScoringUser,
    scenarioName: string,
    parameters: Record<string, unknown>[],
    idempotencyKey?: string,
    batchId = timeOrderedId(),
  ): Promise<string> {
    const max = this.config.limits.batchMaxElements;
    if (parameters.length > max) {
      throw new PayloadTooLargeError(
        `A batch may hold at most ${max} elements; this one has ${parameters.length}. Split it.`,
        'BATCH_TOO_LARGE',
        [{ path: 'body.parameters', message: `at most ${max} elements` }],
      );
    }
    const idempotency =
      idempotencyKey === undefined ? undefined : { key: idempotencyKey, bodyHash: bodyHash(scenarioName, parameters) };
    if (idempotency) {
      // A repeat answers the first batch even if its scenario was undeployed since: it was accepted then.
      const earlier = await this.earlierSubmission(caller, idempotency);
      if (earlier) return earlier;
    }
    const phases = new PhaseTimes();
    await this.runner.requireDeployed(caller.id, scenarioName);
    phases.lap('resolve');
    const chunkSize = Math.max(this.config.batchChunkSize, 1);
    try {
      await this.store.insertBatch({
        id: batchId,
        userId: caller.id,
        scenarioName,
        chunkSize,
        inputs: parameters,
        idempotency,
      });
    } catch (error) {
      // The same key submitted at once by another request, which stored its batch first.
      const earlier =
        idempotency && isDuplicateKey(error) ? await this.earlierSubmission(caller, idempotency) : undefined;
      if (earlier) return earlier;
      throw error;
    }
    phases.lap('store');
    try {
      await this.queue.enqueueChunks(batchId, parameters.length, chunkSize);
    } catch (error) {
      // Chunk jobs already saved find no batch and end at once. The key is free again with the batch.
      await this.store.deleteBatch(batchId);
      throw jobStoreUnavailable(error);
    }
    phases.lap('enqueue');
    this.logger.debug({ batchId, elements: parameters.length, ...phases.fields() }, 'batch submitted');
    return batchId;
  }

  /** The id of the user's batch submitted with this key and body; undefined when none; 409 when the body differed. */
  private async earlierSubmission(caller: ScoringUser, idempotency: BatchIdempotency): Promise<string | undefined> {
    const earlier = await this.store.findByIdempotencyKey(caller.id, idempotency.key);
    if (!earlier) return undefined;
    if (earlier.bodyHash?.equals(idempotency.bodyHash)) return earlier.id;
    throw new ConflictError(
      `Idempotency-Key "${idempotency.key}" was sent before with another body (batch ${earlier.id}); send that body again, or use a new key.`,
      'IDEMPOTENCY_KEY_REUSED',
      [{ path: 'header.Idempotency-Key', message: 'already used with another body' }],
    );
  }

  /** A page of the user's batches, newest first, and the cursor of the next page (null on the last). */
  async list(
    caller: ScoringUser,
    limit: number,
    cursor?: string,
  ): Promise<{ batches: BatchSummary[]; nextCursor: string | null }> {
    const before = cursor === undefined ? undefined : decodeBatchCursor(cursor);
    // One more than asked tells whether a next page exists, so the last page carries no cursor.
    const rows = await this.store.listBatches(caller.id, limit + 1, before);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      batches: page.map(toSummary),
      nextCursor: rows.length > limit && last ? encodeBatchCursor({ createdAt: last.createdAt, id: last.id }) : null,
    };
  }

  async status(caller: ScoringUser, batchId: string): Promise<BatchStatus> {
    const found = await this.store.batchProgress(batchId);
    if (!found || found.batch.userId !== caller.id)
      throw new NotFoundError(`No batch "${batchId}".`, 'BATCH_NOT_FOUND');
    const { batch, progress } = found;
    const finished = batch.finishedAt !== null;
    const completed = progress.succeeded + progress.failed;
    return {
      batchTaskId: batch.id,
      scenarioName: batch.scenarioName,
      state: finished ? 'FINISHED' : progress.started || completed > 0 ? 'RUNNING' : 'QUEUED',
      total: batch.total,
      completed,
      failed: progress.failed,
      createdAt: batch.createdAt.toISOString(),
      finishedAt: batch.finishedAt ? batch.finishedAt.toISOString() : null,
      resultsIds: finished ? await this.store.resultIds(batchId) : [],
    };
  }

  /** Results become visible together, when the batch has finished (as resultsIds do). */
  async results(caller: ScoringUser, batchId: string): Promise<BatchResults> {
    const batch = await this.store.findBatch(batchId);
    if (!batch || batch.userId !== caller.id) throw new NotFoundError(`No batch "${batchId}".`, 'BATCH_NOT_FOUND');
    if (batch.finishedAt === null) return { finished: false, status: await this.status(caller, batchId) };
    return { finished: true, pages: this.store.results(batchId, RESULT_PAGE) };
  }
}

/**
 * The SHA-256 of a batch body as an idempotent repeat must match it: the scenario name and each element's
 * JSON (object keys in the order sent, so the same JSON text; whitespace aside). Hashed element by element,
 * never as one string of the whole body (up to LIMIT_BATCH_BODY_BYTES).
 */
function bodyHash(scenarioName: string, parameters: Record<string, unknown>[]): Buffer {
  const hash = createHash('sha256').update(scenarioName, 'utf8').update('\n');
  for (const element of parameters) hash.update(JSON.stringify(element), 'utf8').update('\n');
  return hash.digest();
}

function toSummary(batch: BatchListing): BatchSummary {
  return {
    batchTaskId: batch.id,
    scenarioName: batch.scenarioName,
    state: batch.finishedAt !== null ? 'FINISHED' : batch.started ? 'RUNNING' : 'QUEUED',
    total: batch.total,
    createdAt: batch.createdAt.toISOString(),
    finishedAt: batch.finishedAt ? batch.finishedAt.toISOString() : null,
    idempotencyKey: batch.idempotencyKey,
  };
}
