import type { Logger } from 'pino';
import { timeOrderedId } from '../ids/time-ordered-id.js';
import type { AppConfig } from '../config/config.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import type { BatchElementResult, BatchStore } from './batch-store.js';
import type { ExecutionQueue } from './execution-queue.js';
import { jobStoreUnavailable } from './job-store-unavailable.js';
import type { ScenarioRunner } from './scenario-runner.js';
import { PhaseTimes } from './phase-times.js';

export interface Caller { id: number }

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
export type BatchResults = { finished: true; pages: AsyncIterable<BatchElementResult[]> } | { finished: false; status: BatchStatus };

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

  /** Stores the batch with its inputs (one transaction), then enqueues one job per chunk. */
  async submit(caller: Caller, scenarioName: string, parameters: Record<string, unknown>[]): Promise<string> {
    const max = this.config.limits.batchMaxElements;
    if (parameters.length > max) {
      throw new PayloadTooLargeError(`A batch may hold at most ${max} elements; this one has ${parameters.length}. Split it.`, 'BATCH_TOO_LARGE', [{ path: 'body.parameters', message: `at most ${max} elements` }]);
    }
    const phases = new PhaseTimes();
    await this.runner.requireDeployed(caller.id, scenarioName);
    phases.lap('resolve');
    const batchId = timeOrderedId();
    const chunkSize = Math.max(this.config.batchChunkSize, 1);
    await this.store.insertBatch({ id: batchId, userId: caller.id, scenarioName, chunkSize, inputs: parameters });
    phases.lap('store');
    try {
      await this.queue.enqueueChunks(batchId, parameters.length, chunkSize);
    } catch (error) {
      // Chunk jobs already saved find no batch and end at once.
      await this.store.deleteBatch(batchId);
      throw jobStoreUnavailable(error);
    }
    phases.lap('enqueue');
    this.logger.debug({ batchId, elements: parameters.length, ...phases.fields() }, 'batch submitted');
    return batchId;
  }

  async status(caller: Caller, batchId: string): Promise<BatchStatus> {
    const found = await this.store.batchProgress(batchId);
    if (!found || found.batch.userId !== caller.id) throw new NotFoundError(`No batch "${batchId}".`, 'BATCH_NOT_FOUND');
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
  async results(caller: Caller, batchId: string): Promise<BatchResults> {
    const batch = await this.store.findBatch(batchId);
    if (!batch || batch.userId !== caller.id) throw new NotFoundError(`No batch "${batchId}".`, 'BATCH_NOT_FOUND');
    if (batch.finishedAt === null) return { finished: false, status: await this.status(caller, batchId) };
    return { finished: true, pages: this.store.results(batchId, RESULT_PAGE) };
  }
}
