import type { LiveTestTerms } from './live-test.js';

/**
 * The columns every live test's row has (`shadows`, `splits`): whose scenario, who started it, the champion it runs
 * beside, how it ended. Each store adds its own.
 */
export interface LiveTestRow {
  id: string;
  scenario_id: number;
  owner_id: number;
  created_by: string;
  champion_version: string;
  champion_version_id: number;
  ended_reason: string | null;
  created_at: Date;
  ended_at: Date | null;
}

export const LIVE_TEST_COLUMNS: readonly string[] = [
  'id',
  'scenario_id',
  'owner_id',
  'created_by',
  'champion_version',
  'champion_version_id',
  'ended_reason',
  'created_at',
  'ended_at',
];

/** What a new live test's row holds in those columns: it starts RUNNING. */
export function newLiveTestRow(test: LiveTestTerms): Record<string, unknown> {
  return {
    id: test.id,
    scenario_id: test.scenarioId,
    owner_id: test.ownerId,
    created_by: test.createdBy,
    champion_version: test.championVersion,
    champion_version_id: test.championVersionId,
    state: 'RUNNING',
  };
}

/** A record's fields from those columns. */
export function liveTestOf(row: LiveTestRow) {
  return {
    id: row.id,
    scenarioId: row.scenario_id,
    ownerId: row.owner_id,
    createdBy: row.created_by,
    championVersion: row.champion_version,
    championVersionId: row.champion_version_id,
    endedReason: row.ended_reason,
    createdAt: new Date(row.created_at),
    endedAt: row.ended_at ? new Date(row.ended_at) : null,
  };
}
