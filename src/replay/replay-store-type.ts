import type { ScenarioDocument } from '../engine/index.js';
import type { NewReplay, ReplayListing, ReplayRecord, ReplayReport } from './replay.js';

/** Where replays are kept (src/replay/replay-store.ts: MySQL). */
export interface ReplayStore {
  /** Stores a new QUEUED replay. */
  insert(replay: NewReplay): Promise<void>;
  /**
   * Stores a new QUEUED replay only while its owner has fewer than `maxActive` replays QUEUED or
   * RUNNING, atomically (concurrent starts of one owner are serialised): answers null when stored,
   * else the owner's active count (nothing stored).
   */
  insertWithinLimit(replay: NewReplay, maxActive: number): Promise<number | null>;
  /** Removes a replay whose job the job store did not take. */
  delete(id: string): Promise<void>;
  find(id: string): Promise<ReplayRecord | undefined>;
  /** Replays QUEUED or RUNNING on the scenarios of this owner. */
  activeOf(ownerId: number): Promise<number>;
  /** A scenario's replays, newest first (ids are time-ordered): at most `limit`, those older than the replay `before` when given. */
  list(scenarioId: number, before: string | undefined, limit: number): Promise<ReplayListing[]>;
  /** The candidate's document as it was when the replay was started. */
  candidateDocument(id: string): Promise<ScenarioDocument | undefined>;
  /**
   * Takes the replay for this worker: RUNNING from the first record, progress and any earlier report
   * cleared (a replay starts again from scratch), heartbeat now. Only a QUEUED replay, or a RUNNING
   * one whose heartbeat is older than `staleAfterSeconds` (its worker died), is taken, and only while
   * no other replay of its owner is RUNNING with a fresher heartbeat (an owner's replays run one at a
   * time, so other owners' go in between): 'claimed'; 'ownerBusy' when another of the owner's runs;
   * 'taken' when another worker is running it or it has ended.
   */
  claim(id: string, staleAfterSeconds: number): Promise<'claimed' | 'ownerBusy' | 'taken'>;
  /** The running replay's worker is alive. */
  heartbeat(id: string): Promise<void>;
  /** Stores the progress of a RUNNING replay; false when it is no longer RUNNING (cancelled): its worker stops. */
  progress(id: string, done: number, failed: number): Promise<boolean>;
  /** Back to QUEUED when RUNNING (its worker is stopping; another takes it from the start). */
  requeue(id: string): Promise<void>;
  /** CANCELLED with `reason`, when QUEUED or RUNNING; false when it had ended already. */
  cancel(id: string, reason: string): Promise<boolean>;
  /** Replays QUEUED since before `cutoff`, or RUNNING without a heartbeat since then: their job may have been lost. */
  stalled(cutoff: Date, limit: number): Promise<string[]>;
  /** Claims a stalled replay for queuing again (QUEUED, queued_at now); false when another sweeper was first. */
  claimStalled(cutoff: Date, id: string): Promise<boolean>;
  /**
   * FINISHED with its report, when still RUNNING (false: it was cancelled meanwhile, nothing stored);
   * `total` is the records actually read (fewer than planned when retention deleted some meanwhile).
   */
  finish(id: string, report: ReplayReport, total: number, done: number, failed: number): Promise<boolean>;
  /** FAILED with the reason, when QUEUED or RUNNING (a cancelled replay stays CANCELLED). */
  fail(id: string, error: string): Promise<void>;
  /**
   * Whether the database answers a trivial query within a moment: after a write failed with what looks
   * like an outage (a broken connection), tells an outage (retry later) from a write the server refused
   * by closing the connection (a statement over max_allowed_packet: retrying can never succeed).
   */
  databaseAnswers(): Promise<boolean>;
}
