import { InputValidationError } from '../engine/errors/input-validation-error.js';
import { ScenarioCompileError } from '../engine/errors/scenario-compile-error.js';
import { ScenarioRunError } from '../engine/errors/scenario-run-error.js';
import { AppError } from '../errors/app-error.js';

/** Why a run failed (schema RunError): `code` is the engine's run error code or one of the API's codes. */
export interface RunError {
  code: string;
  message: string;
  nodeId?: string | null;
  nodeName?: string | null;
  nodeType?: string | null;
  [key: string]: unknown;
}

/** Schema ScoreResult. */
export interface ScoreResult {
  runId: string;
  requestId?: string;
  /** The scenario's name, as the original system's remote/score answered (the same as scenarioName). */
  name: string;
  scenarioName: string;
  version: string | null;
  state: 'SUCCEEDED' | 'FAILED';
  beginTime: string | null;
  endTime: string | null;
  result: Record<string, unknown> | null;
  error: RunError | null;
}

/** A finished run as stored: either a result or an error. */
export type RunOutcome =
  | {
      state: 'SUCCEEDED';
      result: Record<string, unknown>;
      error: null;
      version: string | null;
      beganAt: Date;
      endedAt: Date;
    }
  | { state: 'FAILED'; result: null; error: RunError; version: string | null; beganAt: Date; endedAt: Date };

/** The RunError code of whatever a run threw (what toRunError's `code` would be), without building the error. */
export function runErrorCode(error: unknown): string {
  if (error instanceof InputValidationError) return 'INVALID_INPUT';
  if (error instanceof ScenarioRunError) return error.code;
  if (error instanceof ScenarioCompileError) return 'COMPILE_ERROR';
  if (error instanceof AppError) return error.code;
  return 'INTERNAL_ERROR';
}

/** Turns whatever a stored run threw into the RunError kept with its result (never a stack trace). */
export function toRunError(error: unknown): RunError {
  if (error instanceof InputValidationError) {
    return { code: 'INVALID_INPUT', message: error.message, violations: error.violations };
  }
  if (error instanceof ScenarioRunError) {
    return {
      code: error.code,
      message: error.message,
      nodeId: error.nodeId,
      nodeName: error.nodeName,
      nodeType: error.nodeType,
    };
  }
  if (error instanceof ScenarioCompileError) {
    return { code: 'COMPILE_ERROR', message: error.message, diagnostics: error.diagnostics };
  }
  if (error instanceof AppError) return { code: error.code, message: error.message };
  return {
    code: 'INTERNAL_ERROR',
    message: `The run failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`,
  };
}
