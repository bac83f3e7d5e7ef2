import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../config/config.js';
import { TargetRefusedError } from '../engine/errors/target-refused-error.js';
import type { TargetPolicy } from '../engine/http/target-policy.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { ConflictError } from '../errors/conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { ServiceUnavailableError } from '../errors/service-unavailable-error.js';
import type { ExecutionQueue } from './execution-queue.js';
import { JobStoreUnavailableError } from './job-store-unavailable-error.js';
import { isDuplicateKey } from '../db/mysql-errors.js';
import { isFinished, type RunResultStore, type RunState } from './run-result-store.js';
import type { ScoreResult } from './run-outcome.js';
import type { ScenarioRunner } from './scenario-runner.js';
import { storedScoreResult } from './score-results.js';

export interface Caller { id: number }

export interface AsyncRequest {
  requestId?: string;
  callbackUrl?: string;
  callbackRetryCount?: number;
  callbackRetryDelaySeconds?: number;
}

export type AsyncResult = { finished: true; result: ScoreResult } | { finished: false; requestId: string; state: 'QUEUED' | 'RUNNING' };

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

/** Spec defaults of X-SCE-CallbackRetryCount / X-SCE-CallbackRetryDelay. */
const DEFAULT_RETRY_COUNT = 3;
const DEFAULT_RETRY_DELAY_SECONDS = 5;

/** The API side of execution: synchronous scores, async submissions and results, batches. */
export class ExecutionService {
  constructor(
    private readonly config: AppConfig,
    private readonly runner: ScenarioRunner,
    private readonly store: RunResultStore,
    private readonly queue: ExecutionQueue,
    private readonly callbackPolicy: TargetPolicy,
  ) {}

  /** The hot path: nothing is written; the resolver and the engine's compilations are cached. */
  async score(caller: Caller, name: string, inputs: Record<string, unknown>): Promise<ScoreResult> {
    const deployed = await this.runner.requireDeployed(caller.id, name);
    const beginTime = new Date().toISOString();
    const result = await this.runner.run(deployed, inputs, caller.id);
    return { runId: randomUUID(), name, scenarioName: name, version: deployed.version, state: 'SUCCEEDED', beginTime, endTime: new Date().toISOString(), result, error: null };
  }

  /** Stores the run QUEUED, then enqueues a job carrying only its id. Returns the request id. */
  async submitAsync(caller: Caller, name: string, inputs: Record<string, unknown>, request: AsyncRequest): Promise<string> {
    await this.runner.requireDeployed(caller.id, name);
    const callback = request.callbackUrl ? await this.checkCallback(request) : null;
    const requestId = request.requestId ?? randomUUID();
    const id = randomUUID();
    try {
      await this.store.insertAsyncRun({ id, userId: caller.id, requestId, scenarioName: name, input: inputs, callback });
    } catch (error) {
      if (isDuplicateKey(error)) {
        throw new ConflictError(`Request id "${requestId}" was already used; choose another X-SCE-RequestId.`, 'REQUEST_ID_TAKEN', [{ path: 'header.X-SCE-RequestId', message: 'already used by this user' }]);
      }
      throw error;
    }
    try {
      await this.queue.enqueueRun(id);
    } catch (error) {
      // Nothing half-done: without its job the run would stay QUEUED and block its request id.
      await this.store.deleteRun(id);
      throw jobStoreUnavailable(error);
    }
    return requestId;
  }

  async asyncResult(caller: Caller, name: string, requestId: string): Promise<AsyncResult> {
    const row = await this.store.findByRequestId(caller.id, requestId);
    if (!row || row.scenario_name !== name) {
      throw new NotFoundError(`No run with request id "${requestId}" of scenario "${name}".`, 'RESULT_NOT_FOUND');
    }
    if (!isFinished(row.state)) return { finished: false, requestId, state: row.state as 'QUEUED' | 'RUNNING' };
    return { finished: true, result: storedScoreResult(row) };
  }

  async submitBatch(caller: Caller, scenarioName: string, parameters: Record<string, unknown>[]): Promise<string> {
    const max = this.config.limits.batchMaxElements;
    if (parameters.length > max) {
      throw new PayloadTooLargeError(`A batch may hold at most ${max} elements; this one has ${parameters.length}. Split it.`, 'BATCH_TOO_LARGE', [{ path: 'body.parameters', message: `at most ${max} elements` }]);
    }
    await this.runner.requireDeployed(caller.id, scenarioName);
    const batchId = randomUUID();
    const chunkSize = Math.max(this.config.batchChunkSize, 1);
    const chunkCount = Math.ceil(parameters.length / chunkSize);
    const elements = parameters.map((input) => ({ id: randomUUID(), input }));
    await this.store.insertBatch({ id: batchId, user_id: caller.id, scenario_name: scenarioName, total: parameters.length, chunk_count: chunkCount }, elements);
    try {
      await this.queue.enqueueChunks(batchId, parameters.length, chunkSize);
    } catch (error) {
      // Chunk jobs already saved find no batch and end at once.
      await this.store.deleteBatch(batchId);
      throw jobStoreUnavailable(error);
    }
    return batchId;
  }

  async batchStatus(caller: Caller, batchId: string): Promise<BatchStatus> {
    const batch = await this.store.findBatch(batchId);
    if (!batch || batch.user_id !== caller.id) throw new NotFoundError(`No batch "${batchId}".`, 'BATCH_NOT_FOUND');
    const counts = await this.store.batchCounts(batchId);
    const finished = batch.finished_at !== null;
    const started = counts.RUNNING + counts.SUCCEEDED + counts.FAILED > 0;
    const state: BatchStatus['state'] = finished ? 'FINISHED' : started ? 'RUNNING' : 'QUEUED';
    return {
      batchTaskId: batch.id,
      scenarioName: batch.scenario_name,
      state,
      total: batch.total,
      completed: counts.SUCCEEDED + counts.FAILED,
      failed: counts.FAILED,
      createdAt: new Date(batch.created_at).toISOString(),
      finishedAt: batch.finished_at ? new Date(batch.finished_at).toISOString() : null,
      resultsIds: finished ? await this.store.batchResultIds(batchId) : [],
    };
  }

  private async checkCallback(request: AsyncRequest): Promise<{ url: string; retryCount: number; retryDelaySeconds: number }> {
    const { limits } = this.config;
    const retryCount = request.callbackRetryCount ?? Math.min(DEFAULT_RETRY_COUNT, limits.callbackMaxRetries);
    const retryDelaySeconds = request.callbackRetryDelaySeconds ?? Math.min(DEFAULT_RETRY_DELAY_SECONDS, limits.callbackMaxDelaySeconds);
    // The spec bounds these headers (0–10, 0–3600); the configured limits may be tighter.
    if (retryCount > limits.callbackMaxRetries) {
      throw new BadRequestError(`X-SCE-CallbackRetryCount may be at most ${limits.callbackMaxRetries}.`, 'VALIDATION_FAILED', [{ path: 'header.X-SCE-CallbackRetryCount', message: `must be ≤ ${limits.callbackMaxRetries}` }]);
    }
    if (retryDelaySeconds > limits.callbackMaxDelaySeconds) {
      throw new BadRequestError(`X-SCE-CallbackRetryDelay may be at most ${limits.callbackMaxDelaySeconds} seconds.`, 'VALIDATION_FAILED', [{ path: 'header.X-SCE-CallbackRetryDelay', message: `must be ≤ ${limits.callbackMaxDelaySeconds}` }]);
    }
    const url = request.callbackUrl as string;
    try {
      await this.callbackPolicy.check(url);
    } catch (error) {
      if (error instanceof TargetRefusedError) {
        throw new BadRequestError(`The callback URL is refused: ${error.message}`, 'CALLBACK_REFUSED', [{ path: 'header.X-SCE-CallbackUrl', message: error.message }]);
      }
      throw error;
    }
    return { url, retryCount, retryDelaySeconds };
  }
}

export type { RunState };

/** Only job-store failures become 503 JOB_STORE_UNAVAILABLE; anything else (a MySQL outage while undoing) keeps its own meaning. */
function jobStoreUnavailable(cause: unknown): unknown {
  if (!(cause instanceof JobStoreUnavailableError)) return cause;
  return new ServiceUnavailableError(`The job store is unavailable (${cause.message}); nothing was stored, so the same request can be sent again later.`, 'JOB_STORE_UNAVAILABLE');
}
