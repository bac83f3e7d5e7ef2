import type { NodeType } from '../types.js';

export type RunErrorCode =
  | 'SCRIPT_ERROR'
  | 'TIME_LIMIT_EXCEEDED'
  | 'MEMORY_LIMIT_EXCEEDED'
  | 'MERGE_CONFLICT'
  | 'DECISION_NOT_BOOLEAN'
  | 'UNIQUE_HIT_VIOLATION'
  | 'LOOKUP_FAILED'
  | 'SCENARIO_CALL_FAILED'
  | 'CALL_DEPTH_EXCEEDED'
  | 'CALL_CYCLE'
  | 'HTTP_CALL_FAILED'
  | 'HTTP_TARGET_REFUSED'
  | 'NOT_DEPLOYED'
  | 'RESULT_NOT_SERIALIZABLE'
  | 'RESULT_TOO_LARGE'
  | 'ENGINE_CRASHED'
  | 'MODEL_INPUT_INVALID'
  | 'MODEL_RUN_FAILED';

/** A run failed at a node (or, for limits hit outside any node, with nodeId null). */
export class ScenarioRunError extends Error {
  constructor(
    readonly code: RunErrorCode,
    message: string,
    readonly nodeId: string | null = null,
    readonly nodeName: string | null = null,
    readonly nodeType: NodeType | null = null,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ScenarioRunError';
  }
}
