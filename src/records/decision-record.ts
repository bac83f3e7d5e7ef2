import type { HttpRequest, LookupRequest, LookupResult, TraceEntry } from '../engine/index.js';

/** How the recorded run was asked for. Debug runs are never recorded. */
export type RecordMode = 'SYNC' | 'ASYNC' | 'BATCH';
export type RecordState = 'SUCCEEDED' | 'FAILED';

/** Why a recorded run failed: the run's error as its caller saw it (schema RunError). */
export interface RecordError {
  code: string;
  message: string;
  [key: string]: unknown;
}

/**
 * Where a port call happened: the node, and the SCENARIO_CALL nodes that led to the scenario holding
 * it, outermost first (`[]` in the recorded scenario itself). With `attempt` (the n-th call at the
 * same place: HTTP retries) it names one call of a run, so a replay can find the recording of a call
 * or tell that it has none.
 */
export interface CaptureSite {
  nodeId: string;
  callPath: string[];
  /** 1 for the first call at this site in the run, 2 for its first retry, … */
  attempt: number;
}

/** A port call that threw (connection refused, time-out, target refused by the outbound policy, lookup failure). */
export interface CaptureFailure {
  code?: string;
  message: string;
}

/** What an HTTP_CALL node sent and received. Request headers are not kept: node settings put credentials there. */
export interface HttpCapture extends CaptureSite {
  /** Call order within the run, from 0, across every node and called scenario. */
  seq: number;
  kind: 'HTTP_CALL';
  request: Pick<HttpRequest, 'method' | 'url' | 'body'>;
  response?: { status: number; body: unknown };
  failure?: CaptureFailure;
}

/** What a DATA_LOOKUP node asked for and which rows it got (null: none; an array for mode ALL). */
export interface LookupCapture extends CaptureSite {
  seq: number;
  kind: 'DATA_LOOKUP';
  request: Omit<LookupRequest, 'ownerId'>;
  rows?: LookupResult;
  failure?: CaptureFailure;
}

export type PortCapture = HttpCapture | LookupCapture;

/** One recorded run, as stored and as read back. */
export interface DecisionRecord {
  /** Public id: the sync run id (X-SCE-RunId), or the result id of an async run or batch element. */
  id: string;
  ownerId: number;
  scenarioId: number;
  scenarioName: string;
  /** Version label (`1`, `2`, …) and the id of the version row that ran. */
  version: string;
  versionId: number;
  mode: RecordMode;
  requesterId: number;
  /** Sync: the HTTP request's X-Request-Id; async: X-SCE-RequestId; batch element: its result id. */
  requestId: string;
  batchId: string | null;
  state: RecordState;
  /** The inputs as sent, with pii-tagged variables masked (see maskedInputs). */
  inputs: Record<string, unknown>;
  /** Names of the inputs stored masked. */
  maskedInputs: string[];
  result: Record<string, unknown> | null;
  error: RecordError | null;
  beganAt: Date;
  endedAt: Date;
  durationMicros: number;
  /** The run's trace when the scenario's recording settings ask for it, else null. */
  trace: TraceEntry[] | null;
  captures: PortCapture[];
}

/** A record as lists show it: everything but the trace and the captures, which only reading the record returns. */
export type DecisionRecordSummary = Omit<DecisionRecord, 'trace' | 'captures'> & {
  hasTrace: boolean;
  captureCount: number;
};
