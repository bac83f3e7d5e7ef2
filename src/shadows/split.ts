import { createHash } from 'node:crypto';
import type { ScenarioDocument } from '../engine/index.js';
import type { LiveTestTerms } from './live-test.js';

/** RUNNING: live runs are split; ENDED (end, promote or a deploy): every run goes to the champion, for good. */
export type SplitState = 'RUNNING' | 'ENDED';

/** A challenger as the split runs it: its version as it was when the split started. */
interface SplitChallenger {
  version: string;
  versionId: number;
  contentHash: string;
  percent: number;
}

/** What starting a split fixes: the champion it shares traffic with, how runs are keyed, what is compared. */
interface SplitTerms extends LiveTestTerms {
  stickyBy: string | null;
  decisionOutput: string;
}

export interface SplitRecord extends SplitTerms {
  challengers: SplitChallenger[];
  state: SplitState;
  endedReason: string | null;
  endedBy: string | null;
  promotedVersion: string | null;
  createdAt: Date;
  endedAt: Date | null;
}

/** What start stores: the terms and the challengers with their documents as they were then. */
export interface NewSplit extends SplitTerms {
  challengers: (SplitChallenger & { document: ScenarioDocument })[];
}

/** What the live path needs of a RUNNING split. */
export type LiveSplit = Pick<
  NewSplit,
  'id' | 'ownerId' | 'championVersion' | 'championVersionId' | 'challengers' | 'stickyBy' | 'decisionOutput'
>;

/** One live run given to an arm (`arm`: the version label that ran). */
export interface SplitRun {
  splitId: string;
  arm: string;
  failed: boolean;
  /** The decision output's value as JSON text; null when the run failed. */
  decision: string | null;
  durationMicros: number;
}

export interface StoredSplitRun extends SplitRun {
  seq: number;
}

/**
 * Where a run falls in [0, 100): by the SHA-1 of the sticky value (its first 32 bits; the split id
 * salts it, so two splits do not give one customer the same side every time), or at random. A value
 * that is not a string is keyed by its JSON text (`42` and `"42"` are one customer). FNV-1a was tried
 * first: over the keys `customer-0` … `customer-99999` its 25 % arm got 24,618, outside the binomial
 * 99 % interval (25,000 ± 353); SHA-1's hashes show no such pattern.
 */
export function splitPoint(splitId: string, stickyValue: unknown, random: () => number): number {
  if (stickyValue === undefined) return random() * 100;
  const key = typeof stickyValue === 'string' ? stickyValue : JSON.stringify(stickyValue);
  return (
    (createHash('sha1').update(splitId).update('\u0000').update(key).digest().readUInt32BE(0) / 0x1_0000_0000) * 100
  );
}

/** The challenger whose share holds `point` (challengers first, in order; the champion takes the rest), or undefined for the champion. */
export function armAt<T extends { percent: number }>(challengers: readonly T[], point: number): T | undefined {
  let upTo = 0;
  for (const challenger of challengers) {
    upTo += challenger.percent;
    if (point < upTo) return challenger;
  }
  return undefined;
}
