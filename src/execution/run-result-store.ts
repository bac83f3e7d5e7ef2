import type { Knex } from 'knex';
import type { RunError, RunOutcome } from './run-outcome.js';

export type RunState = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';
export type CallbackState = 'NONE' | 'PENDING' | 'DELIVERED' | 'FAILED';

/** The columns that identify a stored run (enough to upsert its outcome). */
export interface RunIdentity {
  id: string;
  user_id: number;
  request_id: string;
  scenario_name: string;
  batch_id: string | null;
  element_index: number | null;
}

export interface RunResultRow extends RunIdentity {
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

export interface BatchRow {
  id: string;
  user_id: number;
  scenario_name: string;
  total: number;
  chunk_count: number;
  created_at: Date;
  finished_at: Date | null;
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
  batch_id: string;
  element_index: number;
  input: string | null;
}

const FINISHED: RunState[] = ['SUCCEEDED', 'FAILED'];
/** Rows per multi-row INSERT: large enough to be fast, small enough to stay far below max_allowed_packet. */
const INSERT_ROWS = 1000;


/** Knex queries on run_results, batches and callback_attempts. */
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

  async findById(id: string): Promise<RunResultRow | undefined> {
    return (await this.db('run_results').where({ id }).first()) as RunResultRow | undefined;
  }

  async findByRequestId(userId: number, requestId: string): Promise<RunResultRow | undefined> {
    return (await this.db('run_results').where({ user_id: userId, request_id: requestId }).first()) as RunResultRow | undefined;
  }

  async findByIds(ids: string[]): Promise<RunResultRow[]> {
    if (ids.length === 0) return [];
    return (await this.db('run_results').whereIn('id', ids)) as RunResultRow[];
  }

  /** A batch and all its elements, in one transaction, with multi-row inserts. */
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

  async insertBatch(batch: Omit<BatchRow, 'created_at' | 'finished_at'>, elements: Array<{ id: string; input: Record<string, unknown> }>): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('batches').insert(batch);
      for (let start = 0; start < elements.length; start += INSERT_ROWS) {
        const rows = elements.slice(start, start + INSERT_ROWS).map((element, offset) => ({
          id: element.id,
          user_id: batch.user_id,
          request_id: element.id,
          scenario_name: batch.scenario_name,
          batch_id: batch.id,
          element_index: start + offset,
          state: 'QUEUED',
          input: JSON.stringify(element.input),
        }));
        await trx('run_results').insert(rows);
      }
    });
  }

  async findBatch(id: string): Promise<BatchRow | undefined> {
    return (await this.db('batches').where({ id }).first()) as BatchRow | undefined;
  }

  /** Unfinished elements with element_index in [from, to), which this chunk job still has to run. */
  async pendingElements(batchId: string, from: number, to: number): Promise<PendingElement[]> {
    return (await this.db('run_results')
      .where('batch_id', batchId)
      .andWhere('element_index', '>=', from)
      .andWhere('element_index', '<', to)
      .whereIn('state', ['QUEUED', 'RUNNING'])
      .orderBy('element_index')
      .select('id', 'user_id', 'request_id', 'scenario_name', 'batch_id', 'element_index', 'input')) as PendingElement[];
  }

  /** QUEUED → RUNNING (runs of a job, elements of a chunk). */
  async markRunning(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db('run_results').whereIn('id', ids).where('state', 'QUEUED').update({ state: 'RUNNING', started_at: this.db.fn.now(3) });
  }

  /**
   * Stores finished elements with one multi-row upsert keyed by result id: running it again (a
   * chunk re-run after a crash) rewrites the same rows and never adds any.
   */
  async finishRuns(finished: Array<{ element: RunIdentity; outcome: RunOutcome }>): Promise<void> {
    if (finished.length === 0) return;
    const rows = finished.map(({ element, outcome }) => ({
      id: element.id,
      user_id: element.user_id,
      request_id: element.request_id,
      scenario_name: element.scenario_name,
      batch_id: element.batch_id,
      element_index: element.element_index,
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

  async callbackAttempts(resultId: string): Promise<Array<{ attempt: number; http_status: number | null; error: string | null }>> {
    return this.db('callback_attempts').where({ result_id: resultId }).orderBy('id').select('attempt', 'http_status', 'error');
  }
}

export function isFinished(state: RunState): boolean {
  return FINISHED.includes(state);
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

/** The stored RunError of a failed row. */
export function rowError(row: RunResultRow): RunError | null {
  if (row.state !== 'FAILED') return null;
  const details = row.error_details ? (JSON.parse(row.error_details) as Record<string, unknown>) : {};
  return { ...details, code: row.error_code ?? 'INTERNAL_ERROR', message: row.error_message ?? '' };
}
