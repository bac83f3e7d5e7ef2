import type { Knex } from 'knex';
import type { LiveShadow, NewShadow, ShadowRecord, ShadowRun, ShadowState, StoredShadowRun } from './shadow.js';
import type { ScenarioLocks } from '../scenarios/scenario-store-type.js';
import { LIVE_TEST_COLUMNS, type LiveTestRow, liveTestOf, newLiveTestRow } from './live-test-rows.js';
import { LiveTestStore, type RunsTable } from './live-test-runs.js';

/** Shadows listed per scenario, newest first. */
const LIST_LIMIT = 100;
/** The shadow_runs table: shadow runs written 50 a statement (a small hold of the event loop each, ADR 0028). */
const SHADOW_RUNS: RunsTable<ShadowRunRow, StoredShadowRun> = {
  table: 'shadow_runs',
  testColumn: 'shadow_id',
  columns: ['shadow_id', 'run_id', 'request_id', 'began_at', 'champion', 'shadow', 'calls', 'duration_micros'],
  readColumns: ['id', 'run_id', 'request_id', 'began_at', 'champion', 'shadow', 'calls', 'duration_micros'],
  chunk: 50,
  stored: (row, testId) => ({
    seq: Number(row.id),
    shadowId: testId,
    runId: row.run_id,
    requestId: row.request_id,
    beganAt: new Date(row.began_at),
    champion: JSON.parse(row.champion),
    shadow: JSON.parse(row.shadow),
    calls: JSON.parse(row.calls),
    durationMicros: row.duration_micros,
  }),
};

interface ShadowRow extends LiveTestRow {
  shadow_version: string;
  shadow_version_id: number;
  shadow_hash: string;
  sample_rate: number;
  outputs: string;
  state: ShadowState;
  skipped: number | string;
  stopped_at: Date | null;
}

const COLUMNS = [
  ...LIVE_TEST_COLUMNS,
  'shadow_version',
  'shadow_version_id',
  'shadow_hash',
  'sample_rate',
  'outputs',
  'state',
  'skipped',
  'stopped_at',
];

/** A shadow_runs row as a report reads it. */
interface ShadowRunRow {
  id: number | string;
  run_id: string;
  request_id: string;
  began_at: Date;
  champion: string;
  shadow: string;
  calls: string;
  duration_micros: number;
}

/** The shadows and shadow_runs tables (migration 20261129003200_shadows). */
export class MySqlShadowStore extends LiveTestStore<ShadowRunRow, StoredShadowRun> {
  /** `scenarioLocks`: the scenarios feature's row lock (the scenarios table is theirs). */
  constructor(db: Knex, scenarioLocks: ScenarioLocks) {
    super(db, scenarioLocks, SHADOW_RUNS);
  }

  /** Inserts the shadow unless the scenario has `maxActive` shadows not ENDED: then answers how many it has (nothing stored). */
  insertWithinLimit(shadow: NewShadow, maxActive: number): Promise<number | null> {
    return this.insertUnderScenarioLock(shadow.scenarioId, 'shadows', shadowRow(shadow), async (trx) => {
      const [{ active }] = await trx('shadows')
        .where({ scenario_id: shadow.scenarioId })
        .whereNot({ state: 'ENDED' })
        .count({ active: '*' });
      return Number(active) >= maxActive ? Number(active) : null;
    });
  }

  async find(id: string): Promise<ShadowRecord | undefined> {
    const row = (await this.db('shadows').where({ id }).first(COLUMNS)) as ShadowRow | undefined;
    return row ? shadowOf(row) : undefined;
  }

  async list(scenarioId: number): Promise<ShadowRecord[]> {
    return (await this.newestOf<ShadowRow>('shadows', scenarioId, LIST_LIMIT, COLUMNS)).map(shadowOf);
  }

  /** RUNNING → STOPPED (false when it was not RUNNING). */
  async stop(id: string): Promise<boolean> {
    return (
      (await this.db('shadows')
        .where({ id, state: 'RUNNING' })
        .update({ state: 'STOPPED', stopped_at: this.db.fn.now(3) })) > 0
    );
  }

  /** STOPPED → RUNNING (false when it was not STOPPED). */
  async start(id: string): Promise<boolean> {
    return (
      (await this.db('shadows').where({ id, state: 'STOPPED' }).update({ state: 'RUNNING', stopped_at: null })) > 0
    );
  }

  /** Ends every shadow of the scenario that has not ended (its champion was replaced); answers how many. */
  async endAll(scenarioId: number, reason: string): Promise<number> {
    return this.db('shadows')
      .where({ scenario_id: scenarioId })
      .whereNot({ state: 'ENDED' })
      .update({ state: 'ENDED', ended_reason: reason, ended_at: this.db.fn.now(3) });
  }

  /** The scenario's RUNNING shadows with their documents (the live path's cache reads this). */
  async running(scenarioId: number): Promise<LiveShadow[]> {
    const rows = await this.db('shadows')
      .where({ scenario_id: scenarioId, state: 'RUNNING' })
      .select('id', 'owner_id', 'champion_version_id', 'sample_rate', 'shadow_hash', 'shadow_document', 'outputs');
    return rows.map(
      (row: {
        id: string;
        owner_id: number;
        champion_version_id: number;
        sample_rate: number;
        shadow_hash: string;
        shadow_document: string;
        outputs: string;
      }) => ({
        id: row.id,
        ownerId: row.owner_id,
        championVersionId: row.champion_version_id,
        sampleRate: Number(row.sample_rate),
        contentHash: row.shadow_hash,
        document: JSON.parse(row.shadow_document),
        outputs: JSON.parse(row.outputs) as string[],
      }),
    );
  }

  /**
   * The runs as stored: each side's outcome and the calls as JSON text (made by the live path). `onBuilt` is told the
   * time each statement took to build (the shadows' budget charges it).
   */
  insertRuns(runs: readonly ShadowRun[], onBuilt?: (ms: number) => void): Promise<void> {
    return this.runs.insert(
      runs,
      (run) => [
        run.shadowId,
        run.runId,
        run.requestId,
        run.beganAt,
        run.champion,
        run.shadow,
        callsJson(run.calls),
        run.durationMicros,
      ],
      onBuilt,
    );
  }

  /** Adds budget skips to each shadow's count. */
  async addSkipped(skipped: ReadonlyMap<string, number>): Promise<void> {
    for (const [id, count] of skipped) await this.db('shadows').where({ id }).increment('skipped', count);
  }
}

/** The calls of a run that made none (most): one text for all of them. */
const NO_CALLS = JSON.stringify({ unrecorded: [], served: 0, requestDiffers: 0 });

function callsJson(calls: ShadowRun['calls']): string {
  return calls.served === 0 && calls.requestDiffers === 0 && calls.unrecorded.length === 0
    ? NO_CALLS
    : JSON.stringify(calls);
}

/** The row attach stores. */
function shadowRow(shadow: NewShadow): Record<string, unknown> {
  return {
    ...newLiveTestRow(shadow),
    shadow_version: shadow.version,
    shadow_version_id: shadow.versionId,
    shadow_hash: shadow.contentHash,
    shadow_document: JSON.stringify(shadow.document),
    sample_rate: shadow.sampleRate,
    outputs: JSON.stringify(shadow.outputs),
  };
}

function shadowOf(row: ShadowRow): ShadowRecord {
  return {
    ...liveTestOf(row),
    version: row.shadow_version,
    versionId: row.shadow_version_id,
    contentHash: row.shadow_hash,
    sampleRate: Number(row.sample_rate),
    outputs: JSON.parse(row.outputs) as string[],
    state: row.state,
    skipped: Number(row.skipped),
    stoppedAt: row.stopped_at ? new Date(row.stopped_at) : null,
  };
}
