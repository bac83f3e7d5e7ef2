import type { Logger } from 'pino';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import type { CompiledScenario, ScenarioDocument, ScenarioEngine } from '../engine/index.js';
import { isDatabaseUnavailable, safeErrorReason } from '../db/mysql-errors.js';
import type { ResumableJobKind } from '../execution/execution-queue.js';
import { toRunError } from '../execution/run-outcome.js';
import type { DecisionRecordSummary, PortCapture } from '../records/decision-record.js';
import type { RecordedRuns, RecordPage, RecordPosition } from '../records/recorded-runs.js';
import { hashCacheKey } from '../scenarios/version-content.js';
import { RecordedCalls } from './recorded-calls.js';
import { hasEnded, type ReplayRecord } from './replay.js';
import { ReplayReportBuilder, type CandidateOutcome } from './replay-report-builder.js';
import type { ReplayStore } from './replay-store-type.js';
import { RunWindow } from './run-window.js';

export const REPLAY_JOB = 'replay.run';

export interface ReplayJobData {
  replayId: string;
}

/** A running replay's worker says it is alive this often (replays.heartbeat_at). */
const HEARTBEAT_EVERY_MS = 5_000;
/** A RUNNING replay whose heartbeat is older than this has lost its worker: a job of it takes it over. */
const STALE_AFTER_SECONDS = 30;
/** A job whose owner has another replay RUNNING is queued again this much later (its worker slot goes to other owners' replays). */
const OWNER_BUSY_RETRY_MS = 1000;

export interface ReplayJobSettings {
  /** Candidate runs in flight at once (the engine pool batches the runs that queue up, per crossing). */
  concurrency: number;
  /** Replays one worker process runs at once (REPLAY_PER_WORKER), each of another owner. */
  perWorker?: number;
  /** Records read per query. */
  pageSize: number;
}

/** What every report says, whatever its figures. */
const STANDING_NOTES = [
  'Lookups (DATA_LOOKUP nodes) read the collections as they are today, not as they were when the records were made.',
  'Scenarios called by SCENARIO_CALL nodes ran their deployed version of today.',
  'HTTP_CALL nodes got the answers recorded with each record; no call left the service.',
];

/** A page of records with the captures of those that have any. */
interface LoadedPage {
  records: DecisionRecordSummary[];
  captures: Map<string, PortCapture[]>;
  next: RecordPosition | null;
}

/**
 * The worker side of a replay (one Agenda job per replay, through the execution queue): reads the
 * chosen records a page at a time (the next page is read while the current one runs), runs the
 * candidate on each with many runs in flight across page ends (RunWindow), serving HTTP calls from the
 * record's captures, and folds each page's outcomes into the report in record order. Progress is
 * stored after every page.
 *
 * A replay runs from scratch every time its job starts: a worker that died or stopped mid-replay
 * leaves it to another worker, which starts again from the first record (the report is built in
 * memory, so nothing of the interrupted run can be reused).
 */
export class ReplayJob implements ResumableJobKind<ReplayJobData> {
  readonly name = REPLAY_JOB;
  /**
   * Replays one worker process runs at once: one of each owner (claim), so an owner's long replays
   * cannot keep every other owner's waiting, and the engine pool serves the owners of the replays
   * running in turn (its round-robin per tenant).
   */
  readonly concurrency: number;

  constructor(
    private readonly store: ReplayStore,
    private readonly records: RecordedRuns,
    private readonly engine: ScenarioEngine,
    private readonly settings: ReplayJobSettings,
    private readonly logger: Logger,
    private readonly models: ModelDocuments = NO_MODELS,
  ) {
    this.concurrency = Math.max(1, settings.perWorker ?? 1);
  }

  async run(
    { replayId }: ReplayJobData,
    _keepAlive: () => Promise<void>,
    stopping: () => boolean,
  ): Promise<boolean | number> {
    const replay = await this.store.find(replayId);
    if (!replay || hasEnded(replay.state)) return true;
    try {
      return await this.replay(replay, stopping);
    } catch (error) {
      // Only an outage is the queue's to retry (the replay starts again). A write that broke the
      // connection while MySQL still answers (a statement over max_allowed_packet) would fail the same
      // way every time: like anything else, it ends the replay FAILED with the reason. Neither the log
      // line nor the stored reason holds the statement (safeErrorReason).
      if (isDatabaseUnavailable(error) && !(await this.store.databaseAnswers())) {
        // Back to QUEUED if MySQL takes it already, so the retry claims it at once rather than waiting
        // for this attempt's heartbeat to go stale; else the retry takes it over once it has.
        await this.store.requeue(replayId).catch(() => undefined);
        throw error;
      }
      const reason = safeErrorReason(error);
      this.logger.error({ replayId, reason }, 'replay failed');
      await this.store.fail(replayId, `The replay stopped: ${reason}`);
      return true;
    }
  }

  private async replay(replay: ReplayRecord, stopping: () => boolean): Promise<boolean | number> {
    const document = await this.store.candidateDocument(replay.id);
    if (!document) return true;
    const claimed = await this.claim(replay.id, stopping);
    // Another replay of the owner runs: this one stays QUEUED and its job comes back a moment later.
    if (claimed === 'ownerBusy') return OWNER_BUSY_RETRY_MS;
    if (claimed !== 'claimed') return claimed === 'ended';
    const heartbeat = setInterval(() => {
      this.store
        .heartbeat(replay.id)
        .catch((error: unknown) =>
          this.logger.warn({ err: error, replayId: replay.id }, 'replay heartbeat not stored'),
        );
    }, HEARTBEAT_EVERY_MS);
    try {
      return await this.runClaimed(replay, document, stopping);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * Takes the replay for this worker. A second job of the same replay (the stalled-work sweeper queued
   * one while the first waited behind other jobs) finds it RUNNING with a fresh heartbeat: it waits,
   * and takes it over only if the heartbeat stops (that worker died), so the replay is neither run
   * twice at once nor left RUNNING with nobody on it. Answers 'ended' once another worker finished it,
   * 'stopping' when this worker stops first (the job is handed back).
   */
  private async claim(
    replayId: string,
    stopping: () => boolean,
  ): Promise<'claimed' | 'ownerBusy' | 'ended' | 'stopping'> {
    for (;;) {
      const claim = await this.store.claim(replayId, STALE_AFTER_SECONDS);
      if (claim !== 'taken') return claim;
      const now = await this.store.find(replayId);
      if (!now || hasEnded(now.state)) return 'ended';
      if (stopping()) return 'stopping';
      await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_EVERY_MS));
    }
  }

  private async runClaimed(
    replay: ReplayRecord,
    document: ScenarioDocument,
    stopping: () => boolean,
  ): Promise<boolean> {
    const resolved = await this.models.resolve(replay.ownerId, document, hashCacheKey(replay.candidate.contentHash));
    const compiled = this.engine.compile(resolved.cacheKey, resolved.document);
    const report = new ReplayReportBuilder(replay.outputs, replay.sampleSize);
    const window = new RunWindow(this.settings.concurrency);
    // Pages are folded into the report one after another, in record order, off the dispatch path.
    let folded: Promise<void> = Promise.resolve();
    // A fold that failed (its progress write met an outage) stops the dispatching at the next page.
    let foldFailure: { error: unknown } | undefined;
    // The replay was cancelled (its progress could not be stored: no longer RUNNING): stop at the next page.
    let cancelled = false;
    let read = 0;
    let next: Promise<LoadedPage> | null = this.page(replay, undefined, Math.min(this.settings.pageSize, replay.limit));
    try {
      while (next) {
        if (foldFailure) throw foldFailure.error;
        if (cancelled) break;
        const page: LoadedPage = await next;
        read += page.records.length;
        const left = replay.limit - read;
        // Read the next page while this one runs.
        next = page.next && left > 0 ? this.page(replay, page.next, Math.min(this.settings.pageSize, left)) : null;
        // Never left unobserved: awaited at the next turn, or dropped only when this replay stops.
        next?.catch(() => undefined);
        const outcomes = page.records.map((record) =>
          window.run(() => this.runCandidate(compiled, replay.ownerId, record, page.captures)),
        );
        folded = folded.then(async () => {
          const settled = await Promise.all(outcomes);
          page.records.forEach((record, k) => {
            report.add(record, settled[k]);
          });
          if (!(await this.store.progress(replay.id, report.replayed, report.failed))) cancelled = true;
        });
        folded.catch((error: unknown) => {
          foldFailure ??= { error };
        });
        await window.dispatched();
        if (next && stopping()) {
          await folded;
          await this.store.requeue(replay.id);
          return false;
        }
      }
      await folded;
    } finally {
      // However this ends, no fold is left running unobserved.
      await folded.catch(() => undefined);
    }
    if (cancelled) {
      this.logger.info({ replayId: replay.id, replayed: report.replayed }, 'replay cancelled; its worker stopped');
      return true;
    }
    const shortBy = replay.total - report.replayed;
    const notes =
      shortBy > 0
        ? [`${shortBy} record(s) matched when the replay was started but were deleted (retention) before it read them.`]
        : [];
    // Cancelled after its last page: the report is not stored (the replay stays CANCELLED).
    const finished = await this.store.finish(
      replay.id,
      report.build([...STANDING_NOTES, ...notes]),
      report.replayed,
      report.replayed,
      report.failed,
    );
    this.logger.info(
      { replayId: replay.id, replayed: report.replayed, failed: report.failed },
      finished ? 'replay finished' : 'replay cancelled; its report was not stored',
    );
    return true;
  }

  private async page(replay: ReplayRecord, after: RecordPosition | undefined, size: number): Promise<LoadedPage> {
    const page: RecordPage = await this.records.list(replay.scenarioId, replay.filter, after, size, { captures: true });
    return { records: page.records, next: page.next, captures: page.captures ?? new Map() };
  }

  /** The candidate on one record's inputs, in the engine pool's background lane (live runs go first); never throws (a failure is an outcome). */
  private async runCandidate(
    compiled: CompiledScenario,
    ownerId: number,
    record: DecisionRecordSummary,
    captures: Map<string, PortCapture[]>,
  ): Promise<CandidateOutcome> {
    const calls = new RecordedCalls(captures.get(record.id) ?? []);
    const outcome = (result: CandidateOutcome['result'], error: CandidateOutcome['error']): CandidateOutcome => ({
      result,
      error,
      unrecorded: calls.unrecorded,
      served: calls.served,
      requestDiffers: calls.requestDiffers,
    });
    try {
      return outcome(
        (await this.engine.run(compiled, record.inputs, { ownerId, portHooks: calls, lane: 'background' })).result,
        null,
      );
    } catch (error) {
      return outcome(null, toRunError(error));
    }
  }
}
