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
   * When given, the finished run's record is not handed to the recorder at once: `hold` gets the
   * function that does, and the caller calls it once the run's outcome is stored (async runs, batch
   * elements). A job run again after its worker died then re-runs only runs whose outcome was not
   * stored, and those were never recorded: no run is recorded twice (a kill -9 mid-batch left 128
   * extra records). What a crash can lose instead: docs/records.md.
   */
  hold?: (record: () => void) => void;
}

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
  start(deployed: DeployedScenario, inputs: Record<string, unknown>, run: RunToRecord): RunRecording | undefined | Promise<RunRecording | undefined>;
}

/** Records nothing (processes and tests that do not record). */
export const NOT_RECORDING: RunRecorder = { start: () => undefined };
