import type { RunOutcome } from '../../../src/execution/run-outcome.js';
import { parseObject, storedError } from '../../../src/execution/run-columns.js';
import { FINISHED_BEFORE, type RunResultStore } from '../../../src/execution/run-result-store-type.js';
import type { HeldRecord } from '../../../src/records/run-recorder.js';
import type {
  CallbackAttemptRecord,
  CallbackState,
  NewAsyncRun,
  RunIdentity,
  RunRecord,
  RunState,
} from '../../../src/execution/run-result-store.js';
import { storedCallbackAttempt } from '../../../src/execution/run-result-store.js';
import { storedOutcomeTexts } from '../../../src/execution/stored-outcome.js';
import { copyOf, duplicateKeyError } from '../../support/fake-transactions.js';

/** A run_results row as the fake keeps it: the outcome as the MySQL store writes its columns (stored-outcome.ts bounds included). */
interface StoredRun extends RunIdentity {
  state: RunState;
  input: string | null;
  result: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  errorDetails: string | null;
  version: string | null;
  callback: { url: string; retryCount: number; retryDelaySeconds: number } | null;
  callbackState: CallbackState;
  createdAt: Date;
  queuedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  attempts: number;
}

const UNFINISHED: RunState[] = ['QUEUED', 'RUNNING'];
const isDone = (run: StoredRun): boolean => !UNFINISHED.includes(run.state);

/**
 * RunResultStore in memory, for fast service tests; held to the same contract as MySqlRunResultStore
 * (run-result-store-contract.ts). It cannot be refused a row, so finishRuns never answers an error.
 */
export class FakeRunResultStore implements RunResultStore {
  private readonly runs = new Map<string, StoredRun>();
  private readonly attempts: Array<CallbackAttemptRecord & { resultId: string }> = [];

  async insertAsyncRun(run: NewAsyncRun): Promise<void> {
    if (this.runs.has(run.id) || this.byRequest(run.userId, run.requestId))
      throw duplicateKeyError(`${run.userId}-${run.requestId}`);
    const now = new Date();
    this.runs.set(run.id, {
      id: run.id,
      userId: run.userId,
      requestId: run.requestId,
      scenarioName: run.scenarioName,
      batchId: null,
      elementIndex: null,
      state: 'QUEUED',
      input: JSON.stringify(run.input),
      result: null,
      errorCode: null,
      errorMessage: null,
      errorDetails: null,
      version: null,
      callback: run.callback && { ...run.callback },
      callbackState: run.callback ? 'PENDING' : 'NONE',
      createdAt: now,
      queuedAt: now,
      startedAt: null,
      finishedAt: null,
      attempts: 0,
    });
  }

  async insertAsyncRuns(runs: NewAsyncRun[]): Promise<boolean[]> {
    const stored: boolean[] = [];
    for (const run of runs) {
      try {
        await this.insertAsyncRun(run);
        stored.push(true);
      } catch {
        stored.push(false);
      }
    }
    return stored;
  }

  async findById(id: string): Promise<RunRecord | undefined> {
    const run = this.runs.get(id);
    return run && toRecord(run);
  }

  async findByRequestId(userId: number, requestId: string): Promise<RunRecord | undefined> {
    const run = this.byRequest(userId, requestId);
    return run && toRecord(run);
  }

  async findByIds(ids: string[]): Promise<RunRecord[]> {
    return [...new Set(ids)].flatMap((id) => (this.runs.has(id) ? [toRecord(this.runs.get(id)!)] : []));
  }

  async stalledRuns(cutoff: Date, limit: number): Promise<string[]> {
    return [...this.runs.values()]
      .filter((run) => this.isStalled(run, cutoff))
      .slice(0, limit)
      .map((run) => run.id);
  }

  async claimStalled(cutoff: Date, id: string): Promise<boolean> {
    const run = this.runs.get(id);
    if (!run || !UNFINISHED.includes(run.state) || run.queuedAt >= cutoff) return false;
    run.queuedAt = new Date();
    return true;
  }

  async pendingCallbacks(cutoff: Date, limit: number): Promise<Array<{ id: string; attempts: number }>> {
    return [...this.runs.values()]
      .filter(
        (run) =>
          run.callbackState === 'PENDING' &&
          run.queuedAt < cutoff &&
          isDone(run) &&
          run.finishedAt !== null &&
          run.finishedAt < cutoff,
      )
      .slice(0, limit)
      .map((run) => ({ id: run.id, attempts: this.attempts.filter((a) => a.resultId === run.id).length }));
  }

  async claimCallback(cutoff: Date, id: string): Promise<boolean> {
    const run = this.runs.get(id);
    if (run?.callbackState !== 'PENDING' || run.queuedAt >= cutoff) return false;
    run.queuedAt = new Date();
    return true;
  }

  async deleteRuns(ids: string[]): Promise<void> {
    for (const id of ids) this.remove(id);
  }

  async markRunning(ids: string[]): Promise<void> {
    for (const id of new Set(ids)) {
      const run = this.runs.get(id);
      if (!run || !UNFINISHED.includes(run.state)) continue;
      if (run.state === 'QUEUED') run.startedAt = new Date();
      run.state = 'RUNNING';
      run.attempts += 1;
    }
  }

  /** Decision records are not modelled here (`held` is ignored); outcomes follow the contract, first finisher first. */
  async finishRuns(
    finished: Array<{ run: RunIdentity; outcome: RunOutcome }>,
    _held?: readonly HeldRecord[],
  ): Promise<Array<Error | null | typeof FINISHED_BEFORE>> {
    const answers: Array<null | typeof FINISHED_BEFORE> = [];
    const storedNow = new Set<string>();
    for (const { run, outcome } of finished) {
      const texts = storedOutcomeTexts(outcome);
      const columns = {
        state: texts.state,
        result: texts.result,
        errorCode: texts.errorCode,
        errorMessage: texts.errorMessage,
        errorDetails: texts.errorDetails,
        version: outcome.version,
        startedAt: new Date(outcome.beganAt),
        finishedAt: new Date(outcome.endedAt),
      };
      // ON DUPLICATE KEY: the row of this id, or of this user's request id; a finished row keeps its first outcome.
      const existing = this.runs.get(run.id) ?? this.byRequest(run.userId, run.requestId);
      if (existing && isDone(existing)) {
        answers.push(storedNow.has(existing.id) ? null : FINISHED_BEFORE);
        continue;
      }
      storedNow.add(existing?.id ?? run.id);
      answers.push(null);
      if (existing) {
        Object.assign(existing, columns, { input: null });
        continue;
      }
      const now = new Date();
      this.runs.set(run.id, {
        ...run,
        ...columns,
        input: null,
        callback: null,
        callbackState: 'NONE',
        createdAt: now,
        queuedAt: now,
        attempts: 0,
      });
    }
    return answers;
  }

  async deleteFinishedBefore(cutoff: Date, limit: number): Promise<number> {
    const doomed = [...this.runs.values()]
      .filter(
        (run) =>
          run.batchId === null &&
          run.finishedAt !== null &&
          run.finishedAt < cutoff &&
          isDone(run) &&
          run.callbackState !== 'PENDING',
      )
      .sort((a, b) => a.finishedAt!.getTime() - b.finishedAt!.getTime())
      .slice(0, limit);
    for (const run of doomed) this.remove(run.id);
    return doomed.length;
  }

  async recordCallbackAttempt(resultId: string, attempt: CallbackAttemptRecord): Promise<void> {
    if (!this.runs.has(resultId)) throw new Error(`no run ${resultId} (a foreign key refuses the attempt)`);
    this.attempts.push({ resultId, ...storedCallbackAttempt(attempt) });
  }

  async setCallbackState(resultId: string, state: CallbackState): Promise<void> {
    const run = this.runs.get(resultId);
    if (run) run.callbackState = state;
  }

  async callbackAttempts(resultId: string): Promise<CallbackAttemptRecord[]> {
    return this.attempts
      .filter((a) => a.resultId === resultId)
      .map(({ attempt, httpStatus, error }) => ({ attempt, httpStatus, error }));
  }

  private byRequest(userId: number, requestId: string): StoredRun | undefined {
    return [...this.runs.values()].find((run) => run.userId === userId && run.requestId === requestId);
  }

  private isStalled(run: StoredRun, cutoff: Date): boolean {
    return UNFINISHED.includes(run.state) && run.queuedAt < cutoff && run.batchId === null;
  }

  private remove(id: string): void {
    this.runs.delete(id);
    for (let i = this.attempts.length - 1; i >= 0; i -= 1)
      if (this.attempts[i].resultId === id) this.attempts.splice(i, 1);
  }
}

function toRecord(run: StoredRun): RunRecord {
  return copyOf({
    id: run.id,
    userId: run.userId,
    requestId: run.requestId,
    scenarioName: run.scenarioName,
    batchId: run.batchId,
    elementIndex: run.elementIndex,
    state: run.state,
    input: parseObject(run.input),
    result: run.state === 'SUCCEEDED' ? parseObject(run.result) : null,
    error: storedError({
      state: run.state,
      error_code: run.errorCode,
      error_message: run.errorMessage,
      error_details: run.errorDetails,
    }),
    version: run.version,
    callback: run.callback && { ...run.callback, state: run.callbackState },
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    attempts: run.attempts,
  });
}
