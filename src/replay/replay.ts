import type { components } from '../../generated/api-types.js';
import type { ScenarioDocument } from '../engine/index.js';
import type { RecordFilter } from '../records/recorded-runs.js';

/** QUEUED until a worker takes it, RUNNING, then FINISHED (with its report) or FAILED (with why). */
export type ReplayState = 'QUEUED' | 'RUNNING' | 'FINISHED' | 'FAILED' | 'CANCELLED';

/** A replay in one of these states has ended: no job runs it again. */
export function hasEnded(state: ReplayState): boolean {
  return state === 'FINISHED' || state === 'FAILED' || state === 'CANCELLED';
}

/** The report, as stored and answered (schema ReplayReport; built by ReplayReportBuilder). */
export type ReplayReport = components['schemas']['ReplayReport'];

/** The version a replay runs, exactly as it was when the replay was started. */
interface ReplayCandidate {
  /** `develop` or a deployed version number. */
  label: string;
  versionId: number;
  /** version-content.ts: what deploy compares with the content it deploys. */
  contentHash: string;
}

/** What was asked: which records, which outputs compared, how many changed records shown. */
interface ReplayRequest {
  /** The browse filters; `to` is at most the moment the replay was started. */
  filter: RecordFilter;
  outputs: string[];
  limit: number;
  sampleSize: number;
}

/** A replay as stored (without the candidate's document, which only the job reads). */
export interface ReplayRecord extends ReplayRequest {
  id: string;
  scenarioId: number;
  /** The scenario's owner: whose collections the candidate's lookups read. */
  ownerId: number;
  requesterId: number;
  candidate: ReplayCandidate;
  state: ReplayState;
  total: number;
  done: number;
  failed: number;
  report: ReplayReport | null;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** A replay as lists show it: without its report, with the report's count of changed records (null until FINISHED). */
export type ReplayListing = Omit<ReplayRecord, 'report'> & { changed: number | null };

/** What starting a replay stores. */
export type NewReplay = Pick<
  ReplayRecord,
  | 'id'
  | 'scenarioId'
  | 'ownerId'
  | 'requesterId'
  | 'candidate'
  | 'filter'
  | 'outputs'
  | 'limit'
  | 'sampleSize'
  | 'total'
> & {
  document: ScenarioDocument;
};
