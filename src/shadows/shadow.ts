import type { PortCallSite, ScenarioDocument } from '../engine/index.js';
import type { RunError } from '../execution/run-outcome.js';

/** RUNNING: sampled live runs run it; STOPPED: none do until started again; ENDED: its champion was replaced, for good. */
export type ShadowState = 'RUNNING' | 'STOPPED' | 'ENDED';

/** A shadow as stored (without its document, which only the live path reads). */
export interface ShadowRecord {
  id: string;
  scenarioId: number;
  ownerId: number;
  createdBy: string;
  /** The shadow version's label (`develop`, `1`, …) and its row. */
  version: string;
  versionId: number;
  contentHash: string;
  /** The deployed version it runs beside. */
  championVersion: string;
  championVersionId: number;
  sampleRate: number;
  outputs: string[];
  state: ShadowState;
  endedReason: string | null;
  skipped: number;
  createdAt: Date;
  stoppedAt: Date | null;
  endedAt: Date | null;
}

/** What the live path needs of a RUNNING shadow. */
export interface LiveShadow {
  id: string;
  ownerId: number;
  championVersionId: number;
  sampleRate: number;
  contentHash: string;
  document: ScenarioDocument;
  /** Kept beside a result too large to store whole: the report compares only these. */
  outputs: string[];
}

/** How one side of a pair ended. */
export interface SideOutcome {
  result: Record<string, unknown> | null;
  error: RunError | null;
}

/** The shadow's HTTP calls, served from the champion's captures. */
interface ShadowCalls {
  unrecorded: PortCallSite[];
  served: number;
  requestDiffers: number;
}

/** One shadow run, beside its champion run. */
export interface ShadowRun {
  shadowId: string;
  runId: string;
  requestId: string;
  beganAt: Date;
  champion: SideOutcome;
  shadow: SideOutcome;
  calls: ShadowCalls;
  durationMicros: number;
}

/** A stored shadow run with its position (the report's cursor). */
export interface StoredShadowRun extends ShadowRun {
  seq: number;
}

/** What attach stores. */
export interface NewShadow {
  id: string;
  scenarioId: number;
  ownerId: number;
  createdBy: string;
  version: string;
  versionId: number;
  contentHash: string;
  document: ScenarioDocument;
  championVersion: string;
  championVersionId: number;
  sampleRate: number;
  outputs: string[];
}
