import { databaseUnavailableBody } from '../db/database-outage.js';
import { InputValidationError } from '../engine/errors/input-validation-error.js';
import { PortUnavailableError } from '../engine/errors/port-unavailable-error.js';
import { ScenarioCompileError } from '../engine/errors/scenario-compile-error.js';
import { ScenarioRunError } from '../engine/errors/scenario-run-error.js';
import type { ErrorDetail } from '../errors/app-error.js';
import type { ErrorBody } from '../errors/error-handler.js';

/**
 * The engine throws its own errors (it knows nothing of HTTP); this is where they get statuses:
 * bad inputs are the caller's mistake (400), a scenario that does not compile or fails while
 * running is well-formed but unprocessable (422) — never a 500. A port whose service is down (MySQL, for
 * lookups) is the database's outage: 503.
 */
export function engineErrorBody(error: unknown): ErrorBody | undefined {
  if (error instanceof PortUnavailableError) return databaseUnavailableBody();
  if (error instanceof InputValidationError) {
    const details: ErrorDetail[] = error.violations.map((violation) => ({
      path: violation.variable,
      variable: violation.variable,
      message: violation.message,
    }));
    return { status: 400, code: 'INVALID_INPUT', message: error.message, details };
  }
  if (error instanceof ScenarioCompileError) {
    const details: ErrorDetail[] = error.diagnostics.map((diagnostic) => ({
      ...diagnostic,
      path: diagnostic.path ?? (diagnostic.nodeId ? `nodes.${diagnostic.nodeId}` : undefined),
    }));
    return { status: 422, code: 'COMPILE_ERROR', message: error.message, details };
  }
  if (error instanceof ScenarioRunError) {
    const where = error.nodeId
      ? ` at node "${error.nodeName ?? error.nodeId}" (${error.nodeId}, ${error.nodeType})`
      : '';
    const detail: ErrorDetail = {
      code: error.code,
      message: error.message,
      nodeId: error.nodeId ?? undefined,
      nodeName: error.nodeName ?? undefined,
      nodeType: error.nodeType ?? undefined,
    };
    if (error.nodeId) detail.path = `nodes.${error.nodeId}`;
    return {
      status: 422,
      code: 'RUN_FAILED',
      message: `The scenario failed${where}: ${error.message}`,
      details: [detail],
    };
  }
  return undefined;
}
