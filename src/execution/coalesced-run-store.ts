import { GroupCommit } from './group-commit.js';
import type { RunOutcome } from './run-outcome.js';
import { FINISHED_BEFORE, type RunIdentity, type RunRecord, type RunResultStore } from './run-result-store.js';
import type { HeldRecord } from '../records/run-recorder.js';

interface FinishedRun {
  run: RunIdentity;
  outcome: RunOutcome;
  records: HeldRecord[];
}

/**
 * The worker's reads and writes of async runs, coalesced across the run jobs it holds at once:
 * under load one claim (an UPDATE, then a SELECT) serves every job that asked meanwhile, and one
 * multi-row upsert stores every outcome that finished meanwhile, instead of round trips per job
 * and per run. An idle worker pays no wait: a lone request goes out at once.
 */
export class CoalescedRunStore {
  private readonly claims: GroupCommit<string[], RunRecord[]>;
  private readonly finishes: GroupCommit<FinishedRun, boolean>;

  constructor(private readonly store: RunResultStore) {
    this.claims = new GroupCommit({ maxItems: 64, concurrency: 2, commit: (groups) => this.claimAll(groups) });
    // A run whose outcome could not be stored fails alone: the others of its group are stored.
    this.finishes = new GroupCommit({
      maxItems: 500,
      concurrency: 2,
      commit: async (finished) =>
        (
          await this.store.finishRuns(
            finished,
            finished.flatMap((run) => run.records),
          )
        ).map((answer) => (answer === FINISHED_BEFORE ? false : (answer ?? true))),
    });
  }

  /** Marks the QUEUED ones of these runs RUNNING and answers them all (finished ones too, for their callbacks). */
  claim(ids: string[]): Promise<RunRecord[]> {
    return this.claims.submit(ids);
  }

  /**
   * Stores a finished run's outcome with its decision record (held by the run's recording), in one
   * transaction. Resolves true when this call stored it, false when the run was finished already (by
   * another worker running it at once): it keeps its first outcome and record (RunResultStore.finishRuns).
   */
  finish(run: RunIdentity, outcome: RunOutcome, records: HeldRecord[] = []): Promise<boolean> {
    return this.finishes.submit({ run, outcome, records });
  }

  private async claimAll(groups: string[][]): Promise<RunRecord[][]> {
    const ids = [...new Set(groups.flat())];
    // Marked RUNNING (this start counted), then read: the job gives up a run past its attempts
    // (ExecutionWorker), so the count read must include this start. One round trip more per claim,
    // and a claim serves every run job this worker took meanwhile.
    await this.store.markRunning(ids);
    const runs = await this.store.findByIds(ids);
    const byId = new Map(runs.map((run) => [run.id, run]));
    return groups.map((group) => group.flatMap((id) => byId.get(id) ?? []));
  }
}
