import type { ScenarioDocument } from '../engine/index.js';
import type { NewReplay, ReplayRecord, ReplayReport } from './replay.js';

/** Where replays are kept (src/replay/replay-store.ts: MySQL). */
export interface ReplayStore {
  /** Stores a new QUEUED replay. */
  insert(replay: NewReplay): Promise<void>;
  /** Removes a replay whose job the job store did not take. */
  delete(id: string): Promise<void>;
  find(id: string): Promise<ReplayRecord | undefined>;
  /** The candidate's document as it was when the replay was started. */
  candidateDocument(id: string): Promise<ScenarioDocument | undefined>;
  /** RUNNING from the first record: progress and any earlier report are cleared (a replay starts again from scratch). */
  markRunning(id: string): Promise<void>;
  progress(id: string, done: number, failed: number): Promise<void>;
  /** Back to QUEUED (its worker is stopping; another takes it from the start). */
  requeue(id: string): Promise<void>;
  /** FINISHED with its report; `total` is the records actually read (fewer than planned when retention deleted some meanwhile). */
  finish(id: string, report: ReplayReport, total: number, done: number, failed: number): Promise<void>;
  fail(id: string, error: string): Promise<void>;
}
