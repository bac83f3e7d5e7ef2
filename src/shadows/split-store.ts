import type { Knex } from 'knex';
import type { LiveSplit, NewSplit, SplitRecord, SplitRun, SplitState, StoredSplitRun } from './split.js';
import type { ScenarioLocks } from '../scenarios/scenario-store-type.js';
import { LIVE_TEST_COLUMNS, type LiveTestRow, liveTestOf, newLiveTestRow } from './live-test-rows.js';
import { LiveTestStore, type RunsTable } from './live-test-runs.js';

/** The split_runs table: split runs written 500 a statement. */
const SPLIT_RUNS: RunsTable<SplitRunRow, StoredSplitRun> = {
  table: 'split_runs',
  testColumn: 'split_id',
  columns: ['split_id', 'arm', 'failed', 'decision', 'duration_micros'],
  readColumns: ['id', 'arm', 'failed', 'decision', 'duration_micros'],
  chunk: 500,
  stored: (row, testId) => ({
    seq: Number(row.id),
    splitId: testId,
    arm: row.arm,
    failed: Boolean(row.failed),
    decision: row.decision,
    durationMicros: row.duration_micros,
  }),
};

interface SplitRow extends LiveTestRow {
  arms: string;
  sticky_by: string | null;
  decision_output: string;
  state: SplitState;
  ended_by: string | null;
  promoted_version: string | null;
}

const COLUMNS = [...LIVE_TEST_COLUMNS, 'arms', 'sticky_by', 'decision_output', 'state', 'ended_by', 'promoted_version'];

/** A split_runs row as a report reads it. */
interface SplitRunRow {
  id: number | string;
  arm: string;
  failed: number | boolean;
  decision: string | null;
  duration_micros: number;
}

/** The splits and split_runs tables (migration 20261129003300_splits). */
export class MySqlSplitStore extends LiveTestStore<SplitRunRow, StoredSplitRun> {
  /** `scenarioLocks`: the scenarios feature's row lock (the scenarios table is theirs). */
  constructor(db: Knex, scenarioLocks: ScenarioLocks) {
    super(db, scenarioLocks, SPLIT_RUNS);
  }

  /** Inserts the split unless the scenario has a RUNNING one: then answers its id (nothing stored). */
  insertUnlessRunning(split: NewSplit): Promise<string | null> {
    return this.insertUnderScenarioLock(split.scenarioId, 'splits', splitRow(split), async (trx) => {
      const running = await trx('splits').where({ scenario_id: split.scenarioId, state: 'RUNNING' }).first('id');
      return running ? (running.id as string) : null;
    });
  }

  async find(id: string): Promise<SplitRecord | undefined> {
    const row = (await this.db('splits').where({ id }).first(COLUMNS)) as SplitRow | undefined;
    return row ? splitOf(row) : undefined;
  }

  /** The scenario's splits, newest first, at most `limit`. */
  async list(scenarioId: number, limit: number): Promise<SplitRecord[]> {
    return (await this.newestOf<SplitRow>('splits', scenarioId, limit, COLUMNS)).map(splitOf);
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

  insertRuns(runs: readonly SplitRun[]): Promise<void> {
    return this.runs.insert(runs, (run) => [run.splitId, run.arm, run.failed, run.decision, run.durationMicros]);
  }
}

/** The row start stores: the challengers' terms, and apart their documents (only the live path and promote read those). */
function splitRow(split: NewSplit): Record<string, unknown> {
  return {
    ...newLiveTestRow(split),
    arms: JSON.stringify(split.challengers.map(({ document: _, ...arm }) => arm)),
    arm_documents: JSON.stringify(split.challengers.map((arm) => arm.document)),
    sticky_by: split.stickyBy,
    decision_output: split.decisionOutput,
  };
}

function splitOf(row: SplitRow): SplitRecord {
  return {
    ...liveTestOf(row),
    challengers: JSON.parse(row.arms) as SplitRecord['challengers'],
    stickyBy: row.sticky_by,
    decisionOutput: row.decision_output,
    state: row.state,
    endedBy: row.ended_by,
    promotedVersion: row.promoted_version,
  };
}
