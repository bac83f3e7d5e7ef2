import type { Knex } from 'knex';
import type { RunError, RunOutcome } from './run-outcome.js';
import { retryOnDeadlock } from '../db/deadlock-retry.js';
import { isDuplicateKey } from '../db/mysql-errors.js';
import { writeFinishedRuns } from './finished-run-writes.js';
import { OUTCOME_COLUMNS, parseObject, storedError, type RunIdentity } from './run-columns.js';
import { NO_STORED_RUN_RECORDS, type HeldRecord, type StoredRunRecords } from '../records/run-recorder.js';
import { FINISHED_BEFORE, type RunResultStore } from './run-result-store-type.js';
import { camelCased, snakeCased } from '../db/row-fields.js';
import { selectIds } from '../db/selected-ids.js';

export { FINISHED_BEFORE, type RunResultStore } from './run-result-store-type.js';
export type { RunIdentity } from './run-columns.js';

export type RunState = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';
export type CallbackState = 'NONE' | 'PENDING' | 'DELIVERED' | 'FAILED';

/** Where and how a run's result is delivered (async runs submitted with X-SCE-CallbackUrl). */
interface StoredCallback {
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
  /** Times a job started the run (markRunning), this start included once claimed. */
  attempts: number;
}

export interface NewAsyncRun {
  id: string;
  userId: number;
  requestId: string;
  scenarioName: string;
  input: Record<string, unknown>;
  callback: { url: string; retryCount: number; retryDelaySeconds: number } | null;
}

export interface CallbackAttemptRecord {
  attempt: number;
  httpStatus: number | null;
  error: string | null;
}

/** A callback_attempts row as callbackAttempts reads it, and its columns. */
interface CallbackAttemptRow {
  attempt: number;
  http_status: number | null;
  error: string | null;
}
const ATTEMPT_COLUMNS = ['attempt', 'http_status', 'error'] as const;

/** The most of an attempt's error callback_attempts keeps. */
const ATTEMPT_ERROR_MAX_CHARS = 1000;

/** An attempt as it is stored: its error cut to ATTEMPT_ERROR_MAX_CHARS, an empty one as none. */
export function storedCallbackAttempt(attempt: CallbackAttemptRecord): CallbackAttemptRecord {
  return { ...attempt, error: attempt.error ? attempt.error.slice(0, ATTEMPT_ERROR_MAX_CHARS) : null };
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
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const FINISHED: RunState[] = ['SUCCEEDED', 'FAILED'];

/** A finished run's row exists already (QUEUED or RUNNING, or stored by an earlier try): its outcome replaces what it holds. */
/**
 * A finished async run's outcome replaces its row's outcome columns, and its input goes: nothing reads the input
 * of a finished run (the result and the callback carry none; a job run again skips finished runs), and inputs
 * may hold personal data, which is not kept longer than the run needs it (docs/records.md, "Where data lives").
 */
const ON_DUPLICATE_STORE_OUTCOME = `ON DUPLICATE KEY UPDATE ${OUTCOME_COLUMNS.map((column) => `\`${column}\` = VALUES(\`${column}\`)`).join(', ')}, \`input\` = NULL`;

/**
 * Knex queries on run_results (async runs; batch elements are read through BatchStore too) and callback_attempts;
 * answers parsed records (the RunResultStore contract: run-result-store-type.ts).
 */
export class MySqlRunResultStore implements RunResultStore {
  /** `records`: the records feature's writer of stored runs' records, in the transaction of their outcomes. */
  constructor(
    private readonly db: Knex,
    private readonly records: StoredRunRecords = NO_STORED_RUN_RECORDS,
  ) {}

  /** Inserts a QUEUED async run; throws a duplicate-key error when the user already used the request id. */
  async insertAsyncRun(run: NewAsyncRun): Promise<void> {
    await this.db('run_results').insert(asyncRunRow(run));
  }

  /**
   * Inserts QUEUED async runs with one multi-row insert; answers, per run, whether it was stored
   * (false: its user already used the request id). A duplicate fails the whole statement, so only
   * then are the runs inserted one by one to tell which.
   */
  async insertAsyncRuns(runs: NewAsyncRun[]): Promise<boolean[]> {
    try {
      // In id order, as every multi-row write of run_results (see markRunning), and tried again when picked as a deadlock victim.
      const rows = runs.map(asyncRunRow).sort(byId);
      await retryOnDeadlock(() => this.db('run_results').insert(rows));
      return runs.map(() => true);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    const stored: boolean[] = [];
    for (const run of runs) {
      try {
        await this.insertAsyncRun(run);
        stored.push(true);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        stored.push(false);
      }
    }
    return stored;
  }

  async findById(id: string): Promise<RunRecord | undefined> {
    const row = (await this.db('run_results').where({ id }).first()) as RunRow | undefined;
    return row ? toRun(row) : undefined;
  }

  async findByRequestId(userId: number, requestId: string): Promise<RunRecord | undefined> {
    const row = (await this.db('run_results').where({ user_id: userId, request_id: requestId }).first()) as
      | RunRow
      | undefined;
    return row ? toRun(row) : undefined;
  }

  async findByIds(ids: string[]): Promise<RunRecord[]> {
    if (ids.length === 0) return [];
    return ((await this.db('run_results').whereIn('id', ids)) as RunRow[]).map(toRun);
  }

  /**
   * Async runs unfinished (QUEUED, or RUNNING on a worker that may be gone) and queued before `cutoff`:
   * the sweeper's candidates, kept only when no pending job covers them. On the (state, queued_at) index.
   */
  async stalledRuns(cutoff: Date, limit: number): Promise<string[]> {
    return selectIds(
      this.db('run_results')
        .whereIn('state', ['QUEUED', 'RUNNING'])
        .andWhere('queued_at', '<', cutoff)
        .whereNull('batch_id')
        .limit(limit),
    );
  }

  /** Claims a stalled run for re-queuing (moves its queued_at); false when another sweeper was first or it finished meanwhile. */
  async claimStalled(cutoff: Date, id: string): Promise<boolean> {
    return (
      (await this.db('run_results')
        .where({ id })
        .whereIn('state', ['QUEUED', 'RUNNING'])
        .andWhere('queued_at', '<', cutoff)
        .update({ queued_at: this.db.fn.now(3) })) > 0
    );
  }

  /**
   * Finished async runs whose callback is still PENDING, finished and queued before `cutoff`, with the
   * attempts made so far: the sweeper's candidates (its job may have been lost with the job store). On
   * the (callback_state, queued_at) index.
   */
  async pendingCallbacks(cutoff: Date, limit: number): Promise<Array<{ id: string; attempts: number }>> {
    const rows = (await this.db('run_results as r')
      .where('r.callback_state', 'PENDING')
      .andWhere('r.queued_at', '<', cutoff)
      .whereIn('r.state', ['SUCCEEDED', 'FAILED'])
      .andWhere('r.finished_at', '<', cutoff)
      .limit(limit)
      .select(
        'r.id',
        this.db.raw('(SELECT COUNT(*) FROM callback_attempts a WHERE a.result_id = r.id) AS attempts'),
      )) as Array<{ id: string; attempts: number | string }>;
    return rows.map((row) => ({ id: row.id, attempts: Number(row.attempts) }));
  }

  /** Claims a pending callback for re-queuing (moves its run's queued_at); false when another sweeper was first or it ended meanwhile. */
  async claimCallback(cutoff: Date, id: string): Promise<boolean> {
    return (
      (await this.db('run_results')
        .where({ id, callback_state: 'PENDING' })
        .andWhere('queued_at', '<', cutoff)
        .update({ queued_at: this.db.fn.now(3) })) > 0
    );
  }

  /** Undoes insertAsyncRuns when their job could not be saved. */
  async deleteRuns(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db('run_results').whereIn('id', ids).delete();
  }

  /**
   * QUEUED → RUNNING (the runs of a job), and one more start counted (`attempts`) for every run of the
   * job not finished yet: RUNNING ones too (a job taken over from a dead worker, or queued again by the
   * sweeper). The rows are found through the primary key alone, in id order: left to itself, MariaDB
   * may read `state = 'QUEUED'` through the (state, queued_at) index and lock a range of it, which
   * deadlocked under load with the inserts of new QUEUED runs and the outcome upserts of other jobs
   * (500s on async submit). A statement still picked as a deadlock victim is rolled back whole and
   * tried again.
   */
  async markRunning(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const sorted = [...ids].sort();
    await retryOnDeadlock(() =>
      this.db.raw(
        `UPDATE run_results FORCE INDEX (PRIMARY) SET started_at = IF(state = 'QUEUED', NOW(3), started_at), state = 'RUNNING', attempts = attempts + 1 WHERE id IN (${sorted.map(() => '?').join(', ')}) AND state IN ('QUEUED', 'RUNNING')`,
        sorted,
      ),
    );
  }

  /**
   * Stores finished runs and their decision records in one transaction: a record is committed exactly
   * when its run's outcome is (a kill -9 between the two lost records before). The rows are locked
   * first (in id order, by primary key), and a run whose row is finished already keeps its first
   * outcome and gets no record: the same run finished twice at once (a job taken over from a worker
   * that was only slow) is stored and recorded once. Answers, per run, null when this call stored it,
   * FINISHED_BEFORE when its row was finished already (its callback is the first finisher's to
   * schedule), or the error of the one run that could not be stored (writeFinishedRuns: a bad row never
   * takes the others with it). An outage fails the whole call, outcomes and records alike: the job runs again.
   */
  async finishRuns(
    finished: Array<{ run: RunIdentity; outcome: RunOutcome }>,
    held: readonly HeldRecord[] = [],
  ): Promise<Array<Error | null | typeof FINISHED_BEFORE>> {
    if (finished.length === 0) return [];
    const { answers, afterCommit } = await retryOnDeadlock(() =>
      this.db.transaction(async (trx) => {
        const ids = [...new Set(finished.map(({ run }) => run.id))].sort();
        const [rows] = (await trx.raw(
          `SELECT id, state FROM run_results FORCE INDEX (PRIMARY) WHERE id IN (${ids.map(() => '?').join(', ')}) FOR UPDATE`,
          ids,
        )) as [Array<{ id: string; state: RunState }>];
        const done = new Set(rows.filter((row) => isFinished(row.state)).map((row) => row.id));
        // A run given twice (two jobs of this worker holding it) is stored and recorded once.
        const toStore = finished.filter(
          ({ run }, k) => !done.has(run.id) && finished.findIndex((other) => other.run.id === run.id) === k,
        );
        const { errors: written } = await writeFinishedRuns(trx, toStore, ON_DUPLICATE_STORE_OUTCOME);
        const stored = new Set(toStore.filter((_, k) => written[k] === null).map(({ run }) => run.id));
        const errors = new Map(toStore.map(({ run }, k) => [run.id, written[k]]));
        const left = await this.records.write(
          trx,
          held.filter((record) => stored.delete(record.id)),
        );
        return {
          answers: finished.map(({ run }) => (done.has(run.id) ? FINISHED_BEFORE : (errors.get(run.id) ?? null))),
          afterCommit: left,
        };
      }),
    );
    this.records.recordAfterCommit(afterCommit);
    return answers;
  }

  /**
   * Deletes up to `limit` finished async runs (not batch elements) that finished before `cutoff`, oldest first,
   * with their callback attempts (ON DELETE CASCADE); a run whose callback is still being delivered stays.
   * Answers how many it deleted.
   */
  async deleteFinishedBefore(cutoff: Date, limit: number): Promise<number> {
    const [result] = (await this.db.raw(
      "DELETE FROM run_results WHERE batch_id IS NULL AND finished_at < ? AND state IN ('SUCCEEDED', 'FAILED') AND callback_state <> 'PENDING' ORDER BY finished_at LIMIT ?",
      [cutoff, limit],
    )) as [{ affectedRows: number }];
    return result.affectedRows;
  }

  async recordCallbackAttempt(resultId: string, attempt: CallbackAttemptRecord): Promise<void> {
    const stored = storedCallbackAttempt(attempt);
    await this.db('callback_attempts').insert({
      result_id: resultId,
      ...snakeCased(stored, ['attempt', 'httpStatus', 'error']),
    });
  }

  async setCallbackState(resultId: string, state: CallbackState): Promise<void> {
    await this.db('run_results').where({ id: resultId }).update({ callback_state: state });
  }

  async callbackAttempts(resultId: string): Promise<CallbackAttemptRecord[]> {
    const rows = (await this.db('callback_attempts')
      .where({ result_id: resultId })
      .orderBy('id')
      .select(...ATTEMPT_COLUMNS)) as CallbackAttemptRow[];
    return rows.map((row) => camelCased(row, ATTEMPT_COLUMNS));
  }
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byId(a: Record<string, unknown>, b: Record<string, unknown>): number {
  return compareIds(a.id as string, b.id as string);
}

export function isFinished(state: RunState): boolean {
  return FINISHED.includes(state);
}

function asyncRunRow(run: NewAsyncRun): Record<string, unknown> {
  return {
    ...snakeCased(run, ['id', 'userId', 'requestId', 'scenarioName']),
    state: 'QUEUED',
    input: JSON.stringify(run.input),
    callback_url: run.callback?.url ?? null,
    callback_retry_count: run.callback?.retryCount ?? 0,
    callback_retry_delay: run.callback?.retryDelaySeconds ?? 0,
    callback_state: run.callback ? 'PENDING' : 'NONE',
  };
}

function identityOf(
  row: Pick<RunRow, 'id' | 'user_id' | 'request_id' | 'scenario_name'> & {
    batch_id?: string | null;
    element_index?: number | null;
  },
): RunIdentity {
  return {
    id: row.id,
    userId: row.user_id,
    requestId: row.request_id,
    scenarioName: row.scenario_name,
    batchId: row.batch_id ?? null,
    elementIndex: row.element_index ?? null,
  };
}

function toRun(row: RunRow): RunRecord {
  return {
    ...identityOf(row),
    state: row.state,
    input: parseObject(row.input),
    result: row.state === 'SUCCEEDED' ? parseObject(row.result) : null,
    error: storedError(row),
    version: row.version,
    callback:
      row.callback_url === null
        ? null
        : {
            url: row.callback_url,
            retryCount: row.callback_retry_count,
            retryDelaySeconds: row.callback_retry_delay,
            state: row.callback_state,
          },
    createdAt: new Date(row.created_at),
    startedAt: row.started_at ? new Date(row.started_at) : null,
    finishedAt: row.finished_at ? new Date(row.finished_at) : null,
    attempts: Number(row.attempts ?? 0),
  };
}
