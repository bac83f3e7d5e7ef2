/** Reports kept folded per process (least recently read go first). */
const MAX_REPORTS = 100;

/** How one kind of live test's report is folded from its runs. */
export interface ReportFold<Test, Run extends { seq: number }, State, Report> {
  /** Runs read per query. */
  page: number;
  /** The test's runs after the cursor, at most `limit`, in order (the store's runsAfter). */
  runsAfter(test: Test, afterSeq: number, limit: number): Promise<Run[]>;
  /** A report of no runs yet. */
  start(test: Test): State;
  add(state: State, run: Run, test: Test): void;
  build(state: State, test: Test): Report;
}

interface Folded<State, Report> {
  state: State;
  /** The last run folded in (its row id). */
  cursor: number;
  /** The report as last built, until more runs are folded. */
  built?: Report;
  /** Folds of one test one after another. */
  chain: Promise<unknown>;
}

/**
 * Reports of live tests (shadows, splits) folded per process up to a cursor: a read folds only the runs stored
 * since the last one (an index range on `(test id, id)`), never all of them again. Runs are read once they have
 * settled (the store's runsAfter), so a run committed late by another process is not passed over. A run deleted by
 * the retention sweep is either folded already (the cursor never goes back: the report keeps it) or never read.
 */
export class FoldedReports<Test extends { id: string }, Run extends { seq: number }, State, Report> {
  private readonly folded = new Map<string, Folded<State, Report>>();

  constructor(private readonly fold: ReportFold<Test, Run, State, Report>) {}

  report(test: Test): Promise<Report> {
    let entry = this.folded.get(test.id);
    if (entry) this.folded.delete(test.id);
    else entry = { state: this.fold.start(test), cursor: 0, chain: Promise.resolve() };
    // Most recently read last: the first key is the one to drop.
    this.folded.set(test.id, entry);
    if (this.folded.size > MAX_REPORTS) this.folded.delete(this.folded.keys().next().value as string);
    const folded = entry;
    const next = folded.chain.catch(() => undefined).then(() => this.foldNew(test, folded));
    folded.chain = next;
    return next;
  }

  private async foldNew(test: Test, entry: Folded<State, Report>): Promise<Report> {
    for (;;) {
      const runs = await this.fold.runsAfter(test, entry.cursor, this.fold.page);
      for (const run of runs) this.fold.add(entry.state, run, test);
      if (runs.length > 0) {
        entry.cursor = runs[runs.length - 1].seq;
        entry.built = undefined;
      }
      if (runs.length < this.fold.page) break;
    }
    entry.built ??= this.fold.build(entry.state, test);
    return entry.built;
  }
}
