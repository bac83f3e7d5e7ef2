import type { Logger } from 'pino';
import { timeOrderedId } from '../ids/time-ordered-id.js';
import type { CallbackDelivery } from './callback-delivery.js';
import type { ExecutionSettings } from './execution-settings.js';
import type { CallbackJobData, ChunkJobData, JobHandlers, RunJobData } from './execution-queue.js';
import type { ExecutionQueue } from './execution-queue.js';
import type { BatchStore, ElementOutcome } from './batch-store.js';
import { CoalescedRunStore } from './coalesced-run-store.js';
import { mapWithConcurrency } from './map-with-concurrency.js';
import { PhaseTimes } from './phase-times.js';
import { isFinished, type RunRecord, type RunResultStore } from './run-result-store.js';
import type { RunOutcome } from './run-outcome.js';
import type { ScenarioRunner } from './scenario-runner.js';
import type { HeldRecord, RunToRecord } from '../records/run-recorder.js';

/** Results of a chunk are inserted every this many elements. */
const FLUSH_EVERY = 250;

/**
 * The worker side of execution: the handlers of the three job kinds. Every handler is safe to
 * run again for the same job (a worker that died holding it): runs and elements already finished
 * are skipped, results are written by result id.
 */
export class ExecutionWorker implements JobHandlers {
  private readonly runStore: CoalescedRunStore;

  constructor(
    private readonly runner: ScenarioRunner,
    private readonly store: RunResultStore,
    private readonly batches: BatchStore,
    private readonly queue: ExecutionQueue,
    private readonly callbacks: CallbackDelivery,
    private readonly settings: Pick<ExecutionSettings, 'elementConcurrency' | 'lockLifetimeMs' | 'maxRunAttempts'>,
    private readonly logger: Logger,
  ) {
    this.runStore = new CoalescedRunStore(store);
  }

  async start(): Promise<void> {
    await this.queue.startProcessing(this);
  }

  /**
   * Runs a job's async runs. Reads and writes go through CoalescedRunStore: one claim and one upsert
   * serve all the run jobs this worker holds at once.
   */
  async run(data: RunJobData, keepAlive: () => Promise<void> = async () => undefined): Promise<void> {
    const stopRenewal = this.renewLock(keepAlive, 'run');
    try {
      await this.runJob(data);
    } finally {
      stopRenewal();
    }
  }

  private async runJob({ resultIds }: RunJobData): Promise<void> {
    const runs = await this.runStore.claim(resultIds);
    const pending = runs.filter((run) => !isFinished(run.state));
    const callbacks: string[] = [];
    for (const run of runs) {
      // A re-run job (its worker died) whose run finished but whose first callback attempt never happened.
      if (
        isFinished(run.state) &&
        run.callback?.state === 'PENDING' &&
        (await this.store.callbackAttempts(run.id)).length === 0
      )
        callbacks.push(run.id);
    }
    await mapWithConcurrency(pending, this.settings.elementConcurrency, async (run) => {
      // A run started more often than RUN_MAX_ATTEMPTS never finished (its worker died with it, or its
      // job failed for good, each time): it ends FAILED rather than being tried for ever.
      // Its decision record is held and written in the transaction that stores its outcome: stored
      // exactly when the outcome is, once (RunResultStore.finishRuns).
      const held: HeldRecord[] = [];
      const record: RunToRecord = {
        id: run.id,
        mode: 'ASYNC',
        requesterId: run.userId,
        requestId: run.requestId,
        hold: (made) => held.push(made),
      };
      const deployed = await this.runner.resolveForStoredRun(run.userId, run.scenarioName);
      // A run started more often than RUN_MAX_ATTEMPTS never finished (its worker died with it, or its
      // job failed for good, each time): it ends FAILED rather than being tried for ever, recorded as
      // any failed run.
      if (run.attempts > this.settings.maxRunAttempts) {
        this.logger.warn(
          { resultId: run.id, attempts: run.attempts },
          'async run abandoned: started too often without finishing',
        );
        const outcome = abandoned(run, this.settings.maxRunAttempts);
        await this.runner.recordUnrun(deployed, run.input ?? {}, record, outcome);
        const stored = await this.runStore.finish(run, outcome, held);
        if (stored && run.callback?.state === 'PENDING') callbacks.push(run.id);
        return;
      }
      const stored = await this.runStore.finish(
        run,
        await this.runner.runToOutcome(deployed, run.input ?? {}, run.userId, 'async', record),
        held,
      );
      // A run another worker finished first (it ran it at once): that worker sends its callback.
      if (stored && run.callback?.state === 'PENDING') callbacks.push(run.id);
    });
    await Promise.all(callbacks.map((id) => this.queue.scheduleCallback(id, 1, 0)));
  }

  /**
   * Runs the unfinished elements of a chunk: reads the chunk's inputs, runs them through a small
   * pool and inserts their results FLUSH_EVERY at a time (each insert overlaps the running of the
   * next slice; the job's lock is renewed as time passes, see renewLock), marks
   * the chunk finished, and the batch when no chunk is left. A chunk run before (its worker died or
   * stopped) skips the elements already stored.
   */
  async chunk(
    range: ChunkJobData,
    keepAlive: () => Promise<void>,
    stopping: () => boolean = () => false,
  ): Promise<boolean> {
    if (stopping()) return false;
    const stopRenewal = this.renewLock(keepAlive, 'chunk');
    try {
      return await this.runChunk(range, stopping);
    } finally {
      stopRenewal();
    }
  }

  private async runChunk(range: ChunkJobData, stopping: () => boolean): Promise<boolean> {
    const chunk = { batchId: range.batchId, from: range.from, to: range.to };
    const phases = new PhaseTimes();
    const work = await this.batches.chunkWork(chunk);
    if (!work) return true;
    const { batch, parts } = work;
    let elementCount = 0;
    if (parts.length > 0) {
      const stored = parts.some((part) => part.started) ? await this.batches.storedIndexes(chunk) : new Set<number>();
      // Marked while the first elements run; every insert waits for it, so a stored result always belongs to a started part.
      const started = this.batches.markStarted(chunk);
      started.catch(() => undefined);
      const deployed = await this.runner.resolveForStoredRun(batch.userId, batch.scenarioName);
      phases.lap('load');
      for (const part of parts) {
        const elements = part.inputs
          .map((input, offset) => ({ index: part.from + offset, input }))
          .filter((element) => !stored.has(element.index));
        elementCount += elements.length;
        // Started more often than RUN_MAX_ATTEMPTS without finishing (its worker died with it, or its job
        // failed for good, each time): its elements left end FAILED, RUN_ABANDONED, without running.
        if (part.attempts + 1 > this.settings.maxRunAttempts) {
          this.logger.warn(
            { batchId: batch.id, from: part.from, to: part.to, attempts: part.attempts + 1, elements: elements.length },
            'batch part abandoned: started too often without finishing',
          );
          await started;
          const held: HeldRecord[] = [];
          const outcomes: ElementOutcome[] = [];
          for (const element of elements) {
            const resultId = timeOrderedId();
            const outcome = abandonedOutcome(part.attempts, this.settings.maxRunAttempts, null);
            await this.runner.recordUnrun(
              deployed,
              element.input,
              {
                id: resultId,
                mode: 'BATCH',
                requesterId: batch.userId,
                requestId: resultId,
                batchId: batch.id,
                hold: (made) => held.push(made),
              },
              outcome,
            );
            outcomes.push({ index: element.index, resultId, outcome });
          }
          await this.batches.insertResults(batch, outcomes, held);
          await this.batches.markPartFinished(batch.id, part);
          continue;
        }
        // The results of one slice are inserted while the next slice runs; at most one insert is in flight.
        let flushing: Promise<void> = started;
        for (let start = 0; start < elements.length; start += FLUSH_EVERY) {
          // The slice's decision records, written in the transaction of its results (BatchStore.insertResults):
          // a chunk run again after its worker died runs only elements whose result was not stored, never recorded.
          const held: HeldRecord[] = [];
          const hold = (made: HeldRecord) => held.push(made);
          // A stopping worker takes no new element: the ones running finish and are stored.
          const results = await mapWithConcurrency(
            elements.slice(start, start + FLUSH_EVERY),
            this.settings.elementConcurrency,
            async (element): Promise<ElementOutcome> => {
              // The result id is chosen first, so the element's decision record carries it too.
              const resultId = timeOrderedId();
              const record: RunToRecord = {
                id: resultId,
                mode: 'BATCH',
                requesterId: batch.userId,
                requestId: resultId,
                batchId: batch.id,
                hold,
              };
              return {
                index: element.index,
                resultId,
                outcome: await this.runner.runToOutcome(deployed, element.input, batch.userId, 'batch', record),
              };
            },
            stopping,
          );
          phases.lap('run');
          await flushing;
          phases.lap('storeWait');
          flushing = this.batches.insertResults(batch, results, held);
          // Never left unobserved: awaited before the next insert or the end of the part.
          flushing.catch(() => undefined);
          if (stopping()) {
            await flushing;
            return false;
          }
        }
        await flushing;
        phases.lap('storeWait');
        await this.batches.markPartFinished(batch.id, part);
        phases.lap('finish');
      }
    }
    const finished = await this.batches.finishIfComplete(batch.id);
    phases.lap('finish');
    this.logger.debug(
      { batchId: batch.id, from: range.from, to: range.to, elements: elementCount, ...phases.fields() },
      'batch chunk done',
    );
    if (finished) this.logger.info({ batchId: batch.id, total: batch.total }, 'batch finished');
    return true;
  }

  /**
   * Renews a job's lock every quarter of the lock lifetime while the job runs, from a timer: slow
   * runs and a slow database alike would otherwise let Agenda take the job for dead, cancel it and
   * run it again. Answers the function that stops the renewal.
   */
  private renewLock(keepAlive: () => Promise<void>, name: string): () => void {
    const timer = setInterval(
      () => {
        keepAlive().catch((error: unknown) => {
          this.logger.warn({ err: error, job: name }, 'could not renew a job lock');
          clearInterval(timer);
        });
      },
      Math.max(this.settings.lockLifetimeMs / 4, 10),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  async callback({ resultId, attempt }: CallbackJobData): Promise<void> {
    await this.callbacks.attempt(resultId, attempt);
  }
}

/** The outcome of a run given up after `maxAttempts` starts (RUN_ABANDONED). */
function abandoned(run: RunRecord, maxAttempts: number): RunOutcome {
  return abandonedOutcome(run.attempts - 1, maxAttempts, run.startedAt);
}

/** RUN_ABANDONED after `starts` starts that never finished. */
function abandonedOutcome(starts: number, maxAttempts: number, beganAt: Date | null): RunOutcome {
  const now = new Date();
  return {
    state: 'FAILED',
    result: null,
    version: null,
    beganAt: beganAt ?? now,
    endedAt: now,
    error: {
      code: 'RUN_ABANDONED',
      message: `The run was started ${starts} times and never finished (its worker stopped with it, or its job failed, each time); it is not tried again (RUN_MAX_ATTEMPTS is ${maxAttempts}).`,
    },
  };
}
