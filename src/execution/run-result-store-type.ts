import type { HeldRecord } from '../records/run-recorder.js';
import type { RunOutcome } from './run-outcome.js';
import type { CallbackAttemptRecord, CallbackState, NewAsyncRun, RunIdentity, RunRecord } from './run-result-store.js';

/** finishRuns' answer for a run whose row was finished before the call: it kept its first outcome. */
export const FINISHED_BEFORE = 'finished-before';

/**
 * What execution stores of each run (async runs, and batch elements once finished) and of its callback
 * attempts. Implemented over MySQL by MySqlRunResultStore (run-result-store.ts, which also holds the
 * record types); tests run one contract suite on it and on an in-memory fake (test/execution/support/),
 * so service tests on the fake mean something.
 */
export interface RunResultStore {
  /** Adds a QUEUED async run; a request id the user already used fails with an error `isDuplicateKey` recognises. */
  insertAsyncRun(run: NewAsyncRun): Promise<void>;
  /** Adds QUEUED async runs; answers, per run, whether it was stored (false: its user already used the request id). */
  insertAsyncRuns(runs: NewAsyncRun[]): Promise<boolean[]>;
  findById(id: string): Promise<RunRecord | undefined>;
  findByRequestId(userId: number, requestId: string): Promise<RunRecord | undefined>;
  /** The runs of these ids that exist, in no particular order. */
  findByIds(ids: string[]): Promise<RunRecord[]>;
  /** Up to `limit` async runs (not batch elements) unfinished and queued before `cutoff`: the stalled-work sweeper's candidates. */
  stalledRuns(cutoff: Date, limit: number): Promise<string[]>;
  /** Claims a stalled run (its queue time becomes now); false when another sweeper was first or it finished meanwhile. */
  claimStalled(cutoff: Date, id: string): Promise<boolean>;
  /** Up to `limit` finished async runs whose callback is PENDING, queued and finished before `cutoff`, with the attempts made so far. */
  pendingCallbacks(cutoff: Date, limit: number): Promise<Array<{ id: string; attempts: number }>>;
  /** Claims a pending callback (its run's queue time becomes now); false when another sweeper was first or it ended meanwhile. */
  claimCallback(cutoff: Date, id: string): Promise<boolean>;
  /** Removes runs (undoes insertAsyncRuns when their job could not be saved). */
  deleteRuns(ids: string[]): Promise<void>;
  /** QUEUED → RUNNING (started now); every unfinished run of `ids` counts one more attempt; finished runs stay as they are. */
  markRunning(ids: string[]): Promise<void>;
  /**
   * Stores finished runs by result id (inserted, or the outcome of the stored unfinished run, whose input
   * goes), with the decision records `held` for them in the same transaction (docs/adr/0009). A run whose row
   * is finished already keeps its first outcome and gets no record. Answers, per run, null when this call
   * stored it, FINISHED_BEFORE when it was finished before, or the error of the one run that could not be.
   */
  finishRuns(
    finished: Array<{ run: RunIdentity; outcome: RunOutcome }>,
    held?: readonly HeldRecord[],
  ): Promise<Array<Error | null | typeof FINISHED_BEFORE>>;
  /**
   * Deletes up to `limit` finished async runs (not batch elements) that finished before `cutoff`, oldest
   * first, with their callback attempts; a run whose callback is still PENDING stays. Answers how many.
   */
  deleteFinishedBefore(cutoff: Date, limit: number): Promise<number>;
  /** Adds an attempt to deliver the run's callback (`error` kept to 1,000 characters). */
  recordCallbackAttempt(resultId: string, attempt: CallbackAttemptRecord): Promise<void>;
  setCallbackState(resultId: string, state: CallbackState): Promise<void>;
  /** The run's callback attempts in the order they were recorded. */
  callbackAttempts(resultId: string): Promise<CallbackAttemptRecord[]>;
}
