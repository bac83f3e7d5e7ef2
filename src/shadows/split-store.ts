import type { Knex } from 'knex';
import type { LiveSplit, NewSplit, SplitRecord, SplitRun, SplitState, StoredSplitRun } from './split.js';
import { storeTransactionOf } from '../db/store-transaction.js';
import type { ScenarioLocks } from '../scenarios/scenario-store-type.js';

/** Split runs written per statement. */
const INSERT_CHUNK = 500;

interface SplitRow {
  id: string;
  scenario_id: number;
  owner_id: number;
  created_by: string;
  champion_version: string;
  champion_version_id: number;
  arms: string;
  sticky_by: string | null;
  decision_output: string;
  state: SplitState;
  ended_reason: string | null;
  ended_by: string | null;
  promoted_version: string | null;
  created_at: Date;
  ended_at: Date | null;
}

const COLUMNS = [
  'id',
  'scenario_id',
  'owner_id',
  'created_by',
  'champion_version',
  'champion_version_id',
  'arms',
  'sticky_by',
  'decision_output',
  'state',
  'ended_reason',
  'ended_by',
  'promoted_version',
  'created_at',
  'ended_at',
];

/** The splits and split_runs tables (migration 20261129003300_splits). */
export class MySqlSplitStore {
  /** `scenarioLocks`: the scenarios feature's row lock (the scenarios table is theirs). */
  constructor(
    private readonly db: Knex,
    private readonly scenarioLocks: ScenarioLocks,
  ) {}

  /** Inserts the split unless the scenario has a RUNNING one: then answers its id (nothing stored). */
  async insertUnlessRunning(split: NewSplit): Promise<string | null> {
    return this.db.transaction(async (trx) => {
      // The scenario's row is the lock that serialises starts of one scenario's splits.
      await this.scenarioLocks.lockById(storeTransactionOf(trx), split.scenarioId);
      const running = await trx('splits').where({ scenario_id: split.scenarioId, state: 'RUNNING' }).first('id');
      if (running) return running.id as string;
      await trx('splits').insert({
        id: split.id,
        scenario_id: split.scenarioId,
        owner_id: split.ownerId,
        created_by: split.createdBy,
        champion_version: split.championVersion,
        champion_version_id: split.championVersionId,
        arms: JSON.stringify(split.challengers.map(({ document: _, ...arm }) => arm)),
        arm_documents: JSON.stringify(split.challengers.map((arm) => arm.document)),
        sticky_by: split.stickyBy,
        decision_output: split.decisionOutput,
        state: 'RUNNING',
      });
      return null;
    });
  }

  async find(id: string): Promise<SplitRecord | undefined> {
    const row = (await this.db('splits').where({ id }).first(COLUMNS)) as SplitRow | undefined;
    return row ? splitOf(row) : undefined;
  }

  /** The challengers' documents as the split runs them (promote deploys one). */
  async documents(id: string): Promise<unknown[]> {
    const row = await this.db('splits').where({ id }).first('arm_documents');
    return row ? (JSON.parse(row.arm_documents) as unknown[]) : [];
  }

  /** RUNNING → ENDED (false when it had ended). */
  async end(id: string, reason: string, by: string | null): Promise<boolean> {
    return (
      (await this.db('splits')
        .where({ id, state: 'RUNNING' })
        .update({ state: 'ENDED', ended_reason: reason, ended_by: by, ended_at: this.db.fn.now(3) })) > 0
    );
  }

  /** The deployed version a promoted split created. */
  async promoted(id: string, version: string): Promise<void> {
    await this.db('splits').where({ id }).update({ promoted_version: version });
  }

  /** Ends the scenario's RUNNING split (its champion was replaced). */
  async endRunning(scenarioId: number, reason: string): Promise<number> {
    return this.db('splits')
      .where({ scenario_id: scenarioId, state: 'RUNNING' })
      .update({ state: 'ENDED', ended_reason: reason, ended_at: this.db.fn.now(3) });
  }

  /** The scenario's RUNNING split with the challengers' documents (the live path's cache reads this), or null. */
  async running(scenarioId: number): Promise<LiveSplit | null> {
    const row = await this.db('splits')
      .where({ scenario_id: scenarioId, state: 'RUNNING' })
      .first(
        'id',
        'owner_id',
        'champion_version',
        'champion_version_id',
        'arms',
        'arm_documents',
        'sticky_by',
        'decision_output',
      );
    if (!row) return null;
    const documents = JSON.parse(row.arm_documents) as LiveSplit['challengers'][number]['document'][];
    return {
      id: row.id,
      ownerId: row.owner_id,
      championVersion: row.champion_version,
      championVersionId: row.champion_version_id,
      stickyBy: row.sticky_by,
      decisionOutput: row.decision_output,
      challengers: (JSON.parse(row.arms) as SplitRecord['challengers']).map((arm, index) => ({
        ...arm,
        document: documents[index],
      })),
    };
  }

  async insertRuns(runs: readonly SplitRun[]): Promise<void> {
    for (let from = 0; from < runs.length; from += INSERT_CHUNK) {
      await this.db('split_runs').insert(
        runs.slice(from, from + INSERT_CHUNK).map((run) => ({
          split_id: run.splitId,
          arm: run.arm,
          failed: run.failed,
          decision: run.decision,
          duration_micros: run.durationMicros,
        })),
      );
    }
  }

  /** The split's runs after `afterSeq`, in order, at most `limit`, stored at least `settledMs` ago (see MySqlShadowStore.runsAfter). */
  async runsAfter(splitId: string, afterSeq: number, limit: number, settledMs: number): Promise<StoredSplitRun[]> {
    const rows = await this.db('split_runs')
      .where({ split_id: splitId })
      .andWhere('id', '>', afterSeq)
      .andWhereRaw('created_at <= NOW(3) - INTERVAL ? MICROSECOND', [settledMs * 1000])
      .orderBy('id')
      .limit(limit)
      .select('id', 'arm', 'failed', 'decision', 'duration_micros');
    return rows.map(
      (row: {
        id: number | string;
        arm: string;
        failed: number | boolean;
        decision: string | null;
        duration_micros: number;
      }) => ({
        seq: Number(row.id),
        splitId,
        arm: row.arm,
        failed: Boolean(row.failed),
        decision: row.decision,
        durationMicros: row.duration_micros,
      }),
    );
  }
}

function splitOf(row: SplitRow): SplitRecord {
  return {
    id: row.id,
    scenarioId: row.scenario_id,
    ownerId: row.owner_id,
    createdBy: row.created_by,
    championVersion: row.champion_version,
    championVersionId: row.champion_version_id,
    challengers: JSON.parse(row.arms) as SplitRecord['challengers'],
    stickyBy: row.sticky_by,
    decisionOutput: row.decision_output,
    state: row.state,
    endedReason: row.ended_reason,
    endedBy: row.ended_by,
    promotedVersion: row.promoted_version,
    createdAt: new Date(row.created_at),
    endedAt: row.ended_at ? new Date(row.ended_at) : null,
  };
}
