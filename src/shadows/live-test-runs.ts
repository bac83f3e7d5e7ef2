import type { Knex } from 'knex';
import { insertStatement, type SqlValue } from '../db/sql-literals.js';
import { storeTransactionOf } from '../db/store-transaction.js';
import type { ScenarioLocks } from '../scenarios/scenario-store-type.js';

/** A runs table: its name, the column naming the test a run belongs to, what is written and read back. */
export interface RunsTable<Row, Run> {
  table: string;
  testColumn: string;
  /** The columns written, in the order the insert's `values` gives them. */
  columns: readonly string[];
  /** The columns a report reads back (`id` first: the cursor). */
  readColumns: readonly string[];
  /** Rows per INSERT statement. */
  chunk: number;
  /** A run as a report reads it, from its row (`seq`: the row's id, the report's cursor). */
  stored(row: Row, testId: string): Run;
}

/**
 * The runs table of one kind of live test (`shadow_runs` by `shadow_id`, `split_runs` by `split_id`): rows written
 * in bulk, read back in id order from a cursor (the reports), deleted once past their retention. Both kinds keep
 * their runs the same way; only the columns differ.
 */
export class LiveTestRuns<Row, Run> {
  private readonly table: string;
  private readonly testColumn: string;

  constructor(
    private readonly db: Knex,
    private readonly spec: RunsTable<Row, Run>,
  ) {
    this.table = spec.table;
    this.testColumn = spec.testColumn;
  }

  /**
   * Inserts the runs as multi-row statements of SQL literals (src/db/sql-literals.ts): through knex's builder a
   * row cost the API process about 15 µs of CPU (ADR 0007), paid here by every shadow and split run. Each statement
   * is built just before it is sent, so a write of many runs never holds the event loop for all of them at once (a
   * quarter second of shadow runs under load is about a thousand rows, 3 ms); `onBuilt` is told the time each took.
   */
  async insert<Run>(
    runs: readonly Run[],
    values: (run: Run) => SqlValue[],
    onBuilt?: (ms: number) => void,
  ): Promise<void> {
    for (let from = 0; from < runs.length; from += this.spec.chunk) {
      const started = performance.now();
      const statement = insertStatement(
        this.table,
        this.spec.columns,
        runs.slice(from, from + this.spec.chunk).map(values),
      );
      onBuilt?.(performance.now() - started);
      await this.db.raw(statement);
    }
  }

  /**
   * The test's runs after `afterSeq`, in order, at most `limit`, stored at least `settledMs` ago: a row whose
   * insert committed later than a row with a higher id (two processes writing at once) is then still read before
   * the cursor passes it.
   */
  async after(testId: string, afterSeq: number, limit: number, settledMs: number): Promise<Run[]> {
    const rows = (await this.db(this.table)
      .where(this.testColumn, testId)
      .andWhere('id', '>', afterSeq)
      .andWhereRaw('created_at <= NOW(3) - INTERVAL ? MICROSECOND', [settledMs * 1000])
      .orderBy('id')
      .limit(limit)
      .select(this.spec.readColumns)) as Row[];
    return rows.map((row) => this.spec.stored(row, testId));
  }

  /** Deletes at most `limit` runs stored before `cutoff` (oldest first); answers how many. */
  async deleteStoredBefore(cutoff: Date, limit: number): Promise<number> {
    return this.db(this.table).where('created_at', '<', cutoff).orderBy('created_at').limit(limit).delete();
  }
}

/** What the shadows' and the splits' stores share: their database, the scenarios' row lock, their runs table. */
export abstract class LiveTestStore<RunRow, Run> {
  constructor(
    protected readonly db: Knex,
    private readonly scenarioLocks: ScenarioLocks,
    runsTable: RunsTable<RunRow, Run>,
  ) {
    this.runs = new LiveTestRuns(db, runsTable);
  }

  /** The test's runs (written in bulk, read by a cursor, swept past their retention). */
  readonly runs: LiveTestRuns<RunRow, Run>;

  /** The test's runs after `afterSeq` (LiveTestRuns.after), as its report folds them. */
  runsAfter(testId: string, afterSeq: number, limit: number, settledMs: number): Promise<Run[]> {
    return this.runs.after(testId, afterSeq, limit, settledMs);
  }

  /** A scenario's live tests of `table`, newest first, at most `limit` rows of `columns`. */
  protected async newestOf<Row>(table: string, scenarioId: number, limit: number, columns: string[]): Promise<Row[]> {
    return (await this.db(table)
      .where({ scenario_id: scenarioId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .select(columns)) as Row[];
  }

  /**
   * Inserts a live test's row in a transaction that holds the scenario's row lock (the scenarios feature's: it
   * serialises the attaches and starts of one scenario), unless `refusal`, read under that lock, answers something:
   * then that is answered and nothing is stored.
   */
  protected insertUnderScenarioLock<Refused>(
    scenarioId: number,
    table: string,
    row: Record<string, unknown>,
    refusal: (trx: Knex.Transaction) => Promise<Refused | null>,
  ): Promise<Refused | null> {
    return this.db.transaction(async (trx) => {
      await this.scenarioLocks.lockById(storeTransactionOf(trx), scenarioId);
      const refused = await refusal(trx);
      if (refused !== null) return refused;
      await trx(table).insert(row);
      return null;
    });
  }
}
