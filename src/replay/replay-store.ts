import type { Knex } from 'knex';
import type { ScenarioDocument } from '../engine/index.js';
import type { OwnerLocks } from '../auth/owner-ports.js';
import { storeTransactionOf } from '../db/store-transaction.js';
import type { RecordFilter } from '../records/recorded-runs.js';
import type { NewReplay, ReplayListing, ReplayRecord, ReplayReport, ReplayState } from './replay.js';
import type { ReplayStore } from './replay-store-type.js';
import { camelCased, snakeCased } from '../db/row-fields.js';
import { selectIds } from '../db/selected-ids.js';
import { databaseAnswers } from '../db/database.js';

const TABLE = 'replays';

interface ReplayRow {
  id: string;
  scenario_id: number;
  owner_id: number;
  requester_id: number;
  candidate_version: string;
  candidate_version_id: number;
  candidate_hash: string;
  filter: string;
  outputs: string;
  record_limit: number;
  sample_size: number;
  state: ReplayState;
  total: number;
  done: number;
  failed: number;
  report: string | null;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** Every column but the candidate's document (only the job reads it). */
const COLUMNS = [
  'id',
  'scenario_id',
  'owner_id',
  'requester_id',
  'candidate_version',
  'candidate_version_id',
  'candidate_hash',
  'filter',
  'outputs',
  'record_limit',
  'sample_size',
  'state',
  'total',
  'done',
  'failed',
  'report',
  'error',
  'created_at',
  'started_at',
  'finished_at',
];

/** What a list reads: every column but the report. */
const LIST_COLUMNS = COLUMNS.filter((column) => column !== 'report');

/** A filter as JSON: dates as ISO text. */
interface StoredFilter extends Omit<RecordFilter, 'from' | 'to'> {
  from?: string;
  to?: string;
}

/** Knex queries on replays; answers parsed records (JSON columns never leave this file). */
export class MySqlReplayStore implements ReplayStore {
  constructor(
    private readonly db: Knex,
    private readonly owners: OwnerLocks,
  ) {}

  async insert(replay: NewReplay): Promise<void> {
    await this.db(TABLE).insert(replayRow(replay));
  }

  /**
   * The count and the insert in one transaction that first locks the owner's users row: a second start
   * of the same owner waits there until the first has committed, and then counts its replay. (Counting
   * then inserting without it let 12 parallel starts all pass a limit of 2.) Other owners never wait.
   */
  async insertWithinLimit(replay: NewReplay, maxActive: number): Promise<number | null> {
    return this.db.transaction(async (trx) => {
      await this.owners.lockOwner(storeTransactionOf(trx), replay.ownerId);
      const row = (await trx(TABLE)
        .where('owner_id', replay.ownerId)
        .whereIn('state', ['QUEUED', 'RUNNING'])
        .count({ n: '*' })
        .first()) as { n: number | string };
      const active = Number(row.n);
      if (active >= maxActive) return active;
      await trx(TABLE).insert(replayRow(replay));
      return null;
    });
  }

  async delete(id: string): Promise<void> {
    await this.db(TABLE).where({ id }).delete();
  }

  async find(id: string): Promise<ReplayRecord | undefined> {
    const row = (await this.db(TABLE).where({ id }).first(COLUMNS)) as ReplayRow | undefined;
    return row ? toReplay(row) : undefined;
  }

  async activeOf(ownerId: number): Promise<number> {
    const row = (await this.db(TABLE)
      .where('owner_id', ownerId)
      .whereIn('state', ['QUEUED', 'RUNNING'])
      .count({ n: '*' })
      .first()) as { n: number | string };
    return Number(row.n);
  }

  async list(scenarioId: number, before: string | undefined, limit: number): Promise<ReplayListing[]> {
    const query = this.db(TABLE)
      .where('scenario_id', scenarioId)
      // Reports stay in the table: a list reads only their count of changed records.
      .select([...LIST_COLUMNS, this.db.raw("JSON_VALUE(`report`, '$.changed') AS changed")])
      .orderBy('id', 'desc')
      .limit(limit);
    if (before !== undefined) query.andWhere('id', '<', before);
    const rows = (await query) as Array<Omit<ReplayRow, 'report'> & { changed: string | number | null }>;
    return rows.map((row) => {
      const { report: _report, ...replay } = toReplay({ ...row, report: null });
      return { ...replay, changed: row.changed === null ? null : Number(row.changed) };
    });
  }

  async candidateDocument(id: string): Promise<ScenarioDocument | undefined> {
    const row = (await this.db(TABLE).where({ id }).first('candidate_document')) as
      | { candidate_document: string }
      | undefined;
    return row ? (JSON.parse(row.candidate_document) as ScenarioDocument) : undefined;
  }

  /**
   * In one transaction that first locks the owner's users row (as insertWithinLimit), so two workers
   * claiming two replays of one owner at once take one of them. Staleness is judged by the database's
   * clock, which also wrote the heartbeats: workers' clocks may differ.
   */
  async claim(id: string, staleAfterSeconds: number): Promise<'claimed' | 'ownerBusy' | 'taken'> {
    return this.db.transaction(async (trx) => {
      const row = (await trx(TABLE).where({ id }).first('owner_id')) as { owner_id: number } | undefined;
      if (!row) return 'taken';
      await this.owners.lockOwner(storeTransactionOf(trx), row.owner_id);
      const busy = await trx(TABLE)
        .where({ owner_id: row.owner_id, state: 'RUNNING' })
        .whereNot({ id })
        .andWhereRaw('?? >= NOW(3) - INTERVAL ? SECOND', ['heartbeat_at', staleAfterSeconds])
        .first('id');
      if (busy) return 'ownerBusy';
      const taken = await trx(TABLE)
        .where({ id })
        .andWhere((free) =>
          free
            .where('state', 'QUEUED')
            .orWhere((dead) =>
              dead
                .where('state', 'RUNNING')
                .andWhere((silent) =>
                  silent
                    .whereNull('heartbeat_at')
                    .orWhereRaw('?? < NOW(3) - INTERVAL ? SECOND', ['heartbeat_at', staleAfterSeconds]),
                ),
            ),
        )
        .update({
          state: 'RUNNING',
          started_at: this.db.fn.now(3),
          heartbeat_at: this.db.fn.now(3),
          done: 0,
          failed: 0,
          report: null,
          error: null,
          finished_at: null,
        });
      return taken > 0 ? 'claimed' : 'taken';
    });
  }

  async heartbeat(id: string): Promise<void> {
    await this.db(TABLE)
      .where({ id, state: 'RUNNING' })
      .update({ heartbeat_at: this.db.fn.now(3) });
  }

  async stalled(cutoff: Date, limit: number): Promise<string[]> {
    return selectIds(this.stalledAt(this.db(TABLE), cutoff).orderBy('queued_at').limit(limit));
  }

  async claimStalled(cutoff: Date, id: string): Promise<boolean> {
    return (
      (await this.stalledAt(this.db(TABLE).where({ id }), cutoff).update({
        state: 'QUEUED',
        queued_at: this.db.fn.now(3),
        heartbeat_at: null,
      })) > 0
    );
  }

  /** QUEUED since before `cutoff`, or RUNNING with no heartbeat since then (its worker died, and its job is gone too). */
  private stalledAt(query: Knex.QueryBuilder, cutoff: Date): Knex.QueryBuilder {
    return query.andWhere((stalled) =>
      stalled
        .where((queued) => queued.where('state', 'QUEUED').andWhere('queued_at', '<', cutoff))
        .orWhere((running) =>
          running.where('state', 'RUNNING').andWhereRaw('COALESCE(??, ??) < ?', ['heartbeat_at', 'started_at', cutoff]),
        ),
    );
  }

  async progress(id: string, done: number, failed: number): Promise<boolean> {
    return (await this.db(TABLE).where({ id, state: 'RUNNING' }).update({ done, failed })) > 0;
  }

  async requeue(id: string): Promise<void> {
    await this.db(TABLE)
      .where({ id, state: 'RUNNING' })
      .update({ state: 'QUEUED', done: 0, failed: 0, queued_at: this.db.fn.now(3), heartbeat_at: null });
  }

  async cancel(id: string, reason: string): Promise<boolean> {
    return (
      (await this.db(TABLE)
        .where({ id })
        .whereIn('state', ['QUEUED', 'RUNNING'])
        .update({ state: 'CANCELLED', error: reason, finished_at: this.db.fn.now(3), heartbeat_at: null })) > 0
    );
  }

  async finish(id: string, report: ReplayReport, total: number, done: number, failed: number): Promise<boolean> {
    return (
      (await this.db(TABLE)
        .where({ id, state: 'RUNNING' })
        .update({
          state: 'FINISHED',
          report: JSON.stringify(report),
          total,
          done,
          failed,
          finished_at: this.db.fn.now(3),
        })) > 0
    );
  }

  async fail(id: string, error: string): Promise<void> {
    await this.db(TABLE)
      .where({ id })
      .whereIn('state', ['QUEUED', 'RUNNING'])
      .update({ state: 'FAILED', error, finished_at: this.db.fn.now(3) });
  }

  databaseAnswers(): Promise<boolean> {
    return databaseAnswers(this.db);
  }
}

function replayRow(replay: NewReplay): Record<string, unknown> {
  return {
    ...snakeCased(replay, ['id', 'scenarioId', 'ownerId', 'requesterId', 'sampleSize', 'total']),
    candidate_version: replay.candidate.label,
    candidate_version_id: replay.candidate.versionId,
    candidate_hash: replay.candidate.contentHash,
    candidate_document: JSON.stringify(replay.document),
    filter: JSON.stringify(storedFilter(replay.filter)),
    outputs: JSON.stringify(replay.outputs),
    record_limit: replay.limit,
    state: 'QUEUED',
  };
}

function storedFilter(filter: RecordFilter): StoredFilter {
  const { from, to, ...rest } = filter;
  return { ...rest, ...(from ? { from: from.toISOString() } : {}), ...(to ? { to: to.toISOString() } : {}) };
}

function parsedFilter(text: string): RecordFilter {
  const { from, to, ...rest } = JSON.parse(text) as StoredFilter;
  return { ...rest, ...(from ? { from: new Date(from) } : {}), ...(to ? { to: new Date(to) } : {}) };
}

function toReplay(row: ReplayRow): ReplayRecord {
  return {
    ...camelCased(row, [
      'id',
      'scenario_id',
      'owner_id',
      'requester_id',
      'sample_size',
      'state',
      'total',
      'done',
      'failed',
      'error',
    ]),
    candidate: { label: row.candidate_version, versionId: row.candidate_version_id, contentHash: row.candidate_hash },
    filter: parsedFilter(row.filter),
    outputs: JSON.parse(row.outputs) as string[],
    limit: row.record_limit,
    report: row.report === null ? null : (JSON.parse(row.report) as ReplayReport),
    createdAt: new Date(row.created_at),
    startedAt: row.started_at === null ? null : new Date(row.started_at),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at),
  };
}
