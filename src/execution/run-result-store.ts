import type { Knex } from 'knex';
import type { RunError, RunOutcome } from './run-outcome.js';

export type RunState = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';
export type CallbackState = 'NONE' | 'PENDING' | 'DELIVERED' | 'FAILED';

/** What identifies a stored run (enough to upsert its outcome). */
export interface RunIdentity {
  id: string;
  userId: number;
  requestId: string;
  scenarioName: string;
  batchId: string | null;
  elementIndex: number | null;
}

/** Where and how a run's result is delivered (async runs submitted with X-SCE-CallbackUrl). */
export interface StoredCallback {
  url: string;
  retryCount: number;
  retryDelaySeconds: number;
  state: CallbackState;
}

/** A stored run (async run or batch element), parsed. */
export interface RunRecord extends RunIdentity {
  state: RunState;
  input: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  /** Set when state is FAILED. */
  error: RunError | null;
  version: string | null;
  callback: StoredCallback | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface BatchRecord {
  id: string;
  userId: number;
  scenarioName: string;
  total: number;
  chunkCount: number;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface NewBatch {
  id: string;
  userId: number;
  scenarioName: string;
  total: number;
  chunkCount: number;
}

export interface NewAsyncRun {
  id: string;
  userId: number;
  requestId: string;
  scenarioName: string;
  input: Record<string, unknown>;
  callback: { url: string; retryCount: number; retryDelaySeconds: number } | null;
}

/** A batch element ready to run (what a chunk job reads). */
export interface PendingElement extends RunIdentity {
  batchId: string;
  elementIndex: number;
  input: Record<string, unknown>;
}

export interface CallbackAttemptRecord {
  attempt: number;
  httpStatus: number | null;
  error: string | null;
}

interface RunRow {
  id: string;
  user_id: number;
  request_id: string;
  scenario_name: string;
  batch_id: string | null;
  element_index: number | null;
  state: RunState;
  input: string | null;
  result: string | null;
  error_code: string | null;
  error_message: string | null;
  error_details: string | null;
  version: string | null;
  callback_url: string | null;
  callback_retry_count: number;
  callback_retry_delay: number;
  callback_state: CallbackState;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

interface BatchRow {
  id: string;
  user_id: number;
  scenario_name: string;
  total: number;
  chunk_count: number;
  created_at: Date;
  finished_at: Date | null;
}

const FINISHED: RunState[] = ['SUCCEEDED', 'FAILED'];
/** Rows per multi-row INSERT: large enough to be fast, small enough to stay far below max_allowed_packet. */
const INSERT_ROWS = 1000;

/** Knex queries on run_results, batches and callback_attempts; answers parsed records. */
export class RunResultStore {
  constructor(private readonly db: Knex) {}

  /** Inserts a QUEUED async run; throws a duplicate-key error when the user already used the request id. */
  async insertAsyncRun(run: NewAsyncRun): Promise<void> {
    await this.db('run_results').insert({
      id: run.id,
      user_id: run.userId,
      request_id: run.requestId,
      scenario_name: run.scenarioName,
      state: 'QUEUED',
      input: JSON.stringify(run.input),
      callback_url: run.callback?.url ?? null,
      callback_retry_count: run.callback?.retryCount ?? 0,
      callback_retry_delay: run.callback?.retryDelaySeconds ?? 0,
      callback_state: run.callback ? 'PENDING' : 'NONE',
    });
  }

  async findById(id: string): Promise<RunRecord | undefined> {
    const row = (await this.db('run_results').where({ id }).first()) as RunRow | undefined;
    return row ? toRun(row) : undefined;
  }

  async findByRequestId(userId: number, requestId: string): Promise<RunRecord | undefined> {
    const row = (await this.db('run_results').where({ user_id: userId, request_id: requestId }).first()) as RunRow | undefined;
    return row ? toRun(row) : undefined;
  }

  async findByIds(ids: string[]): Promise<RunRecord[]> {
    if (ids.length === 0) return [];
    return ((await this.db('run_results').whereIn('id', ids)) as RunRow[]).map(toRun);
  }

  /** Async runs QUEUED since before `cutoff` (their job may never have been saved). */
  async stalledRuns(cutoff: Date, limit: number): Promise<string[]> {
    const rows = (await this.db('run_results').where('state', 'QUEUED').andWhere('queued_at', '<', cutoff).whereNull('batch_id').limit(limit).select('id')) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }

  /** Ranges of `chunkSize` elements of batches holding elements QUEUED since before `cutoff`. */
  async stalledChunks(cutoff: Date, chunkSize: number, limit: number): Promise<Array<{ batchId: string; from: number; to: number }>> {
    const rows = (await this.db('run_results')
      .where('state', 'QUEUED').andWhere('queued_at', '<', cutoff).whereNotNull('batch_id')
      .groupBy('batch_id', 'chunk')
      .limit(limit)
      .select('batch_id', this.db.raw('FLOOR(element_index / ?) AS chunk', [chunkSize]))) as Array<{ batch_id: string; chunk: number }>;
    return rows.map((row) => ({ batchId: row.batch_id, from: Number(row.chunk) * chunkSize, to: (Number(row.chunk) + 1) * chunkSize }));
  }

  /** Claims stalled QUEUED runs for re-queuing (moves their queued_at); false when another sweeper was first. */
  async claimStalled(cutoff: Date, where: { id: string } | { batchId: string; from: number; to: number }): Promise<boolean> {
    const query = this.db('run_results').where('state', 'QUEUED').andWhere('queued_at', '<', cutoff);
    if ('id' in where) query.andWhere('id', where.id);
    else query.andWhere('batch_id', where.batchId).andWhere('element_index', '>=', where.from).andWhere('element_index', '<', where.to);
    return (await query.update({ queued_at: this.db.fn.now(3) })) > 0;
  }

  /** Undoes insertAsyncRun when its job could not be saved. */
  async deleteRun(id: string): Promise<void> {
    await this.db('run_results').where({ id }).delete();
  }

  /** Undoes insertBatch (its elements go with it) when its jobs could not be saved. */
  async deleteBatch(id: string): Promise<void> {
    await this.db('batches').where({ id }).delete();
  }

  /** A batch and all its elements, in one transaction, with multi-row inserts. */
  async insertBatch(batch: NewBatch, elements: Array<{ id: string; input: Record<string, unknown> }>): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('batches').insert({ id: batch.id, user_id: batch.userId, scenario_name: batch.scenarioName, total: batch.total, chunk_count: batch.chunkCount });
      for (let start = 0; start < elements.length; start += INSERT_ROWS) {
        const rows = elements.slice(start, start + INSERT_ROWS).map((element, offset) => ({
          id: element.id,
          user_id: batch.userId,
          request_id: element.id,
          scenario_name: batch.scenarioName,
          batch_id: batch.id,
          element_index: start + offset,
          state: 'QUEUED',
          input: JSON.stringify(element.input),
        }));
        await trx('run_results').insert(rows);
      }
    });
  }

  async findBatch(id: string): Promise<BatchRecord | undefined> {
    const row = (await this.db('batches').where({ id }).first()) as BatchRow | undefined;
    return row ? toBatch(row) : undefined;
  }

  /** Unfinished elements with element_index in [from, to), which this chunk job still has to run. */
  async pendingElements(batchId: string, from: number, to: number): Promise<PendingElement[]> {
    const rows = (await this.db('run_results')
      .where('batch_id', batchId)
      .andWhere('element_index', '>=', from)
      .andWhere('element_index', '<', to)
      .whereIn('state', ['QUEUED', 'RUNNING'])
      .orderBy('element_index')
      .select('id', 'user_id', 'request_id', 'scenario_name', 'batch_id', 'element_index', 'input')) as Array<Pick<RunRow, 'id' | 'user_id' | 'request_id' | 'scenario_name' | 'input'> & { batch_id: string; element_index: number }>;
    return rows.map((row) => ({ ...identityOf(row), batchId: row.batch_id, elementIndex: row.element_index, input: parseObject(row.input) ?? {} }));
  }

  /** QUEUED → RUNNING (runs of a job, elements of a chunk). */
  async markRunning(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db('run_results').whereIn('id', ids).where('state', 'QUEUED').update({ state: 'RUNNING', started_at: this.db.fn.now(3) });
  }

  /**
   * Stores finished runs with one multi-row upsert keyed by result id: running it again (a chunk
   * re-run after a crash) rewrites the same rows and never adds any.
   */
  async finishRuns(finished: Array<{ run: RunIdentity; outcome: RunOutcome }>): Promise<void> {
    if (finished.length === 0) return;
    const rows = finished.map(({ run, outcome }) => ({
      id: run.id,
      user_id: run.userId,
      request_id: run.requestId,
      scenario_name: run.scenarioName,
      batch_id: run.batchId,
      element_index: run.elementIndex,
      ...outcomeColumns(outcome),
    }));
    await this.db('run_results')
      .insert(rows)
      .onConflict('id')
      .merge(['state', 'result', 'error_code', 'error_message', 'error_details', 'version', 'started_at', 'finished_at']);
  }

  async countUnfinished(batchId: string): Promise<number> {
    const row = (await this.db('run_results').where('batch_id', batchId).whereIn('state', ['QUEUED', 'RUNNING']).count({ n: '*' }).first()) as { n: number | string };
    return Number(row.n);
  }

  async markBatchFinished(batchId: string): Promise<void> {
    await this.db('batches').where({ id: batchId }).whereNull('finished_at').update({ finished_at: this.db.fn.now(3) });
  }

  async batchCounts(batchId: string): Promise<Record<RunState, number>> {
    const rows = (await this.db('run_results').where('batch_id', batchId).groupBy('state').select('state').count({ n: '*' })) as Array<{ state: RunState; n: number | string }>;
    const counts: Record<RunState, number> = { QUEUED: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 0 };
    for (const row of rows) counts[row.state] = Number(row.n);
    return counts;
  }

  async batchResultIds(batchId: string): Promise<string[]> {
    const rows = (await this.db('run_results').where('batch_id', batchId).orderBy('element_index').select('id')) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }

  async recordCallbackAttempt(resultId: string, attempt: number, httpStatus: number | null, error: string | null): Promise<void> {
    await this.db('callback_attempts').insert({ result_id: resultId, attempt, http_status: httpStatus, error: error ? error.slice(0, 1000) : null });
  }

  async setCallbackState(resultId: string, state: CallbackState): Promise<void> {
    await this.db('run_results').where({ id: resultId }).update({ callback_state: state });
  }

  async callbackAttempts(resultId: string): Promise<CallbackAttemptRecord[]> {
    const rows = (await this.db('callback_attempts').where({ result_id: resultId }).orderBy('id').select('attempt', 'http_status', 'error')) as Array<{ attempt: number; http_status: number | null; error: string | null }>;
    return rows.map((row) => ({ attempt: row.attempt, httpStatus: row.http_status, error: row.error }));
  }
}

export function isFinished(state: RunState): boolean {
  return FINISHED.includes(state);
}

function parseObject(text: string | null): Record<string, unknown> | null {
  return text === null ? null : (JSON.parse(text) as Record<string, unknown>);
}

function identityOf(row: Pick<RunRow, 'id' | 'user_id' | 'request_id' | 'scenario_name'> & { batch_id?: string | null; element_index?: number | null }): RunIdentity {
  return { id: row.id, userId: row.user_id, requestId: row.request_id, scenarioName: row.scenario_name, batchId: row.batch_id ?? null, elementIndex: row.element_index ?? null };
}

function toRun(row: RunRow): RunRecord {
  return {
    ...identityOf(row),
    state: row.state,
    input: parseObject(row.input),
    result: row.state === 'SUCCEEDED' ? parseObject(row.result) : null,
    error: storedError(row),
    version: row.version,
    callback: row.callback_url === null ? null : { url: row.callback_url, retryCount: row.callback_retry_count, retryDelaySeconds: row.callback_retry_delay, state: row.callback_state },
    createdAt: new Date(row.created_at),
    startedAt: row.started_at ? new Date(row.started_at) : null,
    finishedAt: row.finished_at ? new Date(row.finished_at) : null,
  };
}

function toBatch(row: BatchRow): BatchRecord {
  return {
    id: row.id,
    userId: row.user_id,
    scenarioName: row.scenario_name,
    total: row.total,
    chunkCount: row.chunk_count,
    createdAt: new Date(row.created_at),
    finishedAt: row.finished_at ? new Date(row.finished_at) : null,
  };
}

/** The stored RunError of a failed row: code and message in columns, the rest (node, violations) as JSON. */
function storedError(row: Pick<RunRow, 'state' | 'error_code' | 'error_message' | 'error_details'>): RunError | null {
  if (row.state !== 'FAILED') return null;
  const details = row.error_details ? (JSON.parse(row.error_details) as Record<string, unknown>) : {};
  return { ...details, code: row.error_code ?? 'INTERNAL_ERROR', message: row.error_message ?? '' };
}

function outcomeColumns(outcome: RunOutcome): Record<string, unknown> {
  const { error } = outcome;
  let details: string | null = null;
  if (error) {
    const { code: _code, message: _message, ...rest } = error;
    details = Object.keys(rest).length > 0 ? JSON.stringify(rest) : null;
  }
  return {
    state: outcome.state,
    result: outcome.result ? JSON.stringify(outcome.result) : null,
    error_code: error?.code ?? null,
    error_message: error?.message ?? null,
    error_details: details,
    version: outcome.version,
    started_at: outcome.beganAt,
    finished_at: outcome.endedAt,
  };
}
