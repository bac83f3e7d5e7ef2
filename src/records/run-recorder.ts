import type { Knex } from 'knex';
import type { PortHooks, TraceEntry } from '../engine/index.js';
import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';
import type { RecordError, RecordMode } from './decision-record.js';

/** What execution knows of a run before it starts, for its record. */
export interface RunToRecord {
  /** The record's id: the sync run id, or the result id of an async run or batch element. */
  id: string;
  mode: RecordMode;
  requesterId: number;
  /** Sync: the HTTP request's id; async: X-SCE-RequestId; batch element: its result id. */
  requestId: string;
  batchId?: string | null;
  /**
   * Stored runs (async runs, batch elements): the finished run's record is not handed to the buffered
   * recorder but to `hold`, and the caller writes it in the transaction that stores the run's outcome
   * (StoredRunRecords.write), only when that transaction is the one that stored it. A record is then
   * stored exactly when its run's outcome is: a kill -9 between the two cannot lose it (the buffered
   * recorder's last RECORDS_FLUSH_MS were lost), and a run stored by another worker first (a job taken
   * over from a slow worker) or a job run again after its worker died never records a run twice
   * (docs/adr/0009-stored-run-records-with-outcomes.md).
   */
  hold?: (record: HeldRecord) => void;
}

/** A stored run's record, made when its run ended, waiting to be written with the run's outcome (StoredRunRecords). */
export interface HeldRecord {
  /** The record's id: the run's result id. */
  readonly id: string;
}

/**
 * What the records feature offers execution for stored runs: their held records written in the
 * transaction that stores their outcomes. Execution never writes decision_record_pages itself.
 */
export interface StoredRunRecords {
  /**
   * Writes the records on `trx` (the caller's open transaction), to be committed or rolled back with
   * it. Throws when MySQL is unavailable or the transaction was picked as a deadlock victim (the
   * caller's transaction fails as a whole). Answers the records it left out of the transaction: too
   * large for one statement within max_allowed_packet, or refused by the database; the caller hands
   * them to `recordAfterCommit` once its transaction committed.
   */
  write(trx: Knex.Transaction, records: readonly HeldRecord[]): Promise<HeldRecord[]>;
  /** Hands records to the buffered recorder (the path of sync runs): after the outcomes' commit only. */
  recordAfterCommit(records: readonly HeldRecord[]): void;
}

/** Writes nothing (processes and tests that do not record: no record is ever held then). */
export const NO_STORED_RUN_RECORDS: StoredRunRecords = { write: async () => [], recordAfterCommit: () => undefined };

/** How a recorded run ended. */
export interface RecordedOutcome {
  result: Record<string, unknown> | null;
  error: RecordError | null;
  trace?: TraceEntry[];
  beganAt: Date;
  endedAt: Date;
  durationMicros: number;
}

/** One run being recorded: pass `trace` and `portHooks` to the engine's run, then `finish` it. */
export interface RunRecording {
  readonly trace: boolean;
  readonly portHooks: PortHooks;
  /** Hands the finished run to the recorder: no I/O, never throws. */
  finish(outcome: RecordedOutcome): void;
}

/**
 * What the records feature offers execution: a recording for a run that is to be recorded (its
 * scenario records runs, and a sync run was sampled), else undefined. Settings are cached: the
 * answer comes at once (no promise) unless they must be read from the database.
 */
export interface RunRecorder {
  start(
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    run: RunToRecord,
  ): RunRecording | undefined | Promise<RunRecording | undefined>;
}

/** Records nothing (processes and tests that do not record). */
export const NOT_RECORDING: RunRecorder = { start: () => undefined };
