import type { PortCallSite, ScenarioDocument } from '../engine/index.js';
import type { RunError } from '../execution/run-outcome.js';
import type { LiveTestTerms } from './live-test.js';

/** RUNNING: sampled live runs run it; STOPPED: none do until started again; ENDED: its champion was replaced, for good. */
export type ShadowState = 'RUNNING' | 'STOPPED' | 'ENDED';

/** What attaching a shadow fixes: which version runs beside which champion, how often, comparing what. */
interface ShadowTerms extends LiveTestTerms {
  /** The shadow version's label (`develop`, `1`, …) and its row. */
  version: string;
  versionId: number;
  contentHash: string;
  sampleRate: number;
  /** Kept beside a result too large to store whole: the report compares only these. */
  outputs: string[];
}

/** A shadow as stored (without its document, which only the live path reads). */
export interface ShadowRecord extends ShadowTerms {
  state: ShadowState;
  endedReason: string | null;
  skipped: number;
  createdAt: Date;
  stoppedAt: Date | null;
  endedAt: Date | null;
}

/** What attach stores: the terms and the shadow version's document as it was then. */
export interface NewShadow extends ShadowTerms {
  document: ScenarioDocument;
}

/** What the live path needs of a RUNNING shadow. */
export type LiveShadow = Pick<
  NewShadow,
  'id' | 'ownerId' | 'championVersionId' | 'sampleRate' | 'contentHash' | 'document' | 'outputs'
>;

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

/** One shadow run, beside its champion run, as written: each side's outcome as the JSON text stored. */
export interface ShadowRun {
  shadowId: string;
  runId: string;
  requestId: string;
  beganAt: Date;
  champion: string;
  shadow: string;
  calls: ShadowCalls;
  durationMicros: number;
}

/** A stored shadow run as a report reads it: its position (the report's cursor) and each side's outcome. */
export interface StoredShadowRun extends Omit<ShadowRun, 'champion' | 'shadow'> {
  seq: number;
  champion: SideOutcome;
  shadow: SideOutcome;
}
