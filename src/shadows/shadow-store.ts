import type { Knex } from 'knex';
import type { LiveShadow, NewShadow, ShadowRecord, ShadowRun, ShadowState, StoredShadowRun } from './shadow.js';
import { storeTransactionOf } from '../db/store-transaction.js';
import type { ScenarioLocks } from '../scenarios/scenario-store-type.js';

/** Shadows listed per scenario, newest first. */
const LIST_LIMIT = 100;
/** Shadow runs written per statement. */
const INSERT_CHUNK = 200;

interface ShadowRow {
  id: string;
  scenario_id: number;
  owner_id: number;
  created_by: string;
  shadow_version: string;
  shadow_version_id: number;
  shadow_hash: string;
  champion_version: string;
  champion_version_id: number;
  sample_rate: number;
  outputs: string;
  state: ShadowState;
  ended_reason: string | null;
  skipped: number | string;
  created_at: Date;
  stopped_at: Date | null;
  ended_at: Date | null;
}

const COLUMNS = [
  'id',
  'scenario_id',
  'owner_id',
  'created_by',
  'shadow_version',
  'shadow_version_id',
  'shadow_hash',
  'champion_version',
  'champion_version_id',
  'sample_rate',
  'outputs',
  'state',
  'ended_reason',
  'skipped',
  'created_at',
  'stopped_at',
  'ended_at',
];

/** The shadows and shadow_runs tables (migration 20261129003200_shadows). */
export class MySqlShadowStore {
  /** `scenarioLocks`: the scenarios feature's row lock (the scenarios table is theirs). */
  constructor(
    private readonly db: Knex,
    private readonly scenarioLocks: ScenarioLocks,
  ) {}

  /** Inserts the shadow unless the scenario has `maxActive` shadows not ENDED: then answers how many it has (nothing stored). */
  async insertWithinLimit(shadow: NewShadow, maxActive: number): Promise<number | null> {
    return this.db.transaction(async (trx) => {
      // The scenario's row is the lock that serialises attaches of one scenario.
      await this.scenarioLocks.lockById(storeTransactionOf(trx), shadow.scenarioId);
      const [{ active }] = await trx('shadows')
        .where({ scenario_id: shadow.scenarioId })
        .whereNot({ state: 'ENDED' })
        .count({ active: '*' });
      if (Number(active) >= maxActive) return Number(active);
      await trx('shadows').insert({
        id: shadow.id,
        scenario_id: shadow.scenarioId,
        owner_id: shadow.ownerId,
        created_by: shadow.createdBy,
        shadow_version: shadow.version,
        shadow_version_id: shadow.versionId,
        shadow_hash: shadow.contentHash,
        shadow_document: JSON.stringify(shadow.document),
        champion_version: shadow.championVersion,
        champion_version_id: shadow.championVersionId,
        sample_rate: shadow.sampleRate,
        outputs: JSON.stringify(shadow.outputs),
        state: 'RUNNING',
      });
      return null;
    });
  }

  async find(id: string): Promise<ShadowRecord | undefined> {
    const row = (await this.db('shadows').where({ id }).first(COLUMNS)) as ShadowRow | undefined;
    return row ? shadowOf(row) : undefined;
  }

  async list(scenarioId: number): Promise<ShadowRecord[]> {
    const rows = await this.db('shadows')
      .where({ scenario_id: scenarioId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(LIST_LIMIT)
      .select(COLUMNS);
    return (rows as ShadowRow[]).map(shadowOf);
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

  async insertRuns(runs: readonly ShadowRun[]): Promise<void> {
    for (let from = 0; from < runs.length; from += INSERT_CHUNK) {
      await this.db('shadow_runs').insert(
        runs.slice(from, from + INSERT_CHUNK).map((run) => ({
          shadow_id: run.shadowId,
          run_id: run.runId,
          request_id: run.requestId,
          began_at: run.beganAt,
          champion: JSON.stringify(run.champion),
          shadow: JSON.stringify(run.shadow),
          calls: JSON.stringify(run.calls),
          duration_micros: run.durationMicros,
        })),
      );
    }
  }

  /** Adds budget skips to each shadow's count. */
  async addSkipped(skipped: ReadonlyMap<string, number>): Promise<void> {
    for (const [id, count] of skipped) await this.db('shadows').where({ id }).increment('skipped', count);
  }

  /**
   * The shadow's runs after `afterSeq`, in order, at most `limit`, stored at least `settledMs` ago: a
   * row whose insert committed later than a row with a higher id (two processes writing at once) is
   * then still read before the cursor passes it.
   */
  async runsAfter(shadowId: string, afterSeq: number, limit: number, settledMs: number): Promise<StoredShadowRun[]> {
    const rows = await this.db('shadow_runs')
      .where({ shadow_id: shadowId })
      .andWhere('id', '>', afterSeq)
      .andWhereRaw('created_at <= NOW(3) - INTERVAL ? MICROSECOND', [settledMs * 1000])
      .orderBy('id')
      .limit(limit)
      .select('id', 'run_id', 'request_id', 'began_at', 'champion', 'shadow', 'calls', 'duration_micros');
    return rows.map(
      (row: {
        id: number | string;
        run_id: string;
        request_id: string;
        began_at: Date;
        champion: string;
        shadow: string;
        calls: string;
        duration_micros: number;
      }) => ({
        seq: Number(row.id),
        shadowId,
        runId: row.run_id,
        requestId: row.request_id,
        beganAt: new Date(row.began_at),
        champion: JSON.parse(row.champion),
        shadow: JSON.parse(row.shadow),
        calls: JSON.parse(row.calls),
        durationMicros: row.duration_micros,
      }),
    );
  }
}

function shadowOf(row: ShadowRow): ShadowRecord {
  return {
    id: row.id,
    scenarioId: row.scenario_id,
    ownerId: row.owner_id,
    createdBy: row.created_by,
    version: row.shadow_version,
    versionId: row.shadow_version_id,
    contentHash: row.shadow_hash,
    championVersion: row.champion_version,
    championVersionId: row.champion_version_id,
    sampleRate: Number(row.sample_rate),
    outputs: JSON.parse(row.outputs) as string[],
    state: row.state,
    endedReason: row.ended_reason,
    skipped: Number(row.skipped),
    createdAt: new Date(row.created_at),
    stoppedAt: row.stopped_at ? new Date(row.stopped_at) : null,
    endedAt: row.ended_at ? new Date(row.ended_at) : null,
  };
}
