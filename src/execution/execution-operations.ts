import type { BatchService } from './batch-service.js';
import type { ExecutionService } from './execution-service.js';

/** An execution operation's input, validated against the spec by whichever lane received it. */
export interface OperationInput {
  query: Record<string, unknown>;
  params: Record<string, string>;
  /** Declared header parameters by lower-case name (values as sent, or already coerced). */
  headers: Record<string, unknown>;
  body: unknown;
}

export interface OperationReply {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export type ExecutionOperationCore = (caller: { id: number }, input: OperationInput) => Promise<OperationReply>;
export type HotOperation = 'scoreScenario' | 'scoreAsync' | 'getAsyncScoreResult' | 'getBatchStatus';

function text(value: unknown): string | undefined {
  return value === undefined || value === '' ? undefined : String(value);
}

function integer(value: unknown): number | undefined {
  return value === undefined || value === '' ? undefined : Number(value);
}

/**
 * The handler cores of the execution hot paths, shared by their two entry points: the fast lane
 * (src/http/fast-lane.ts) and the Express handlers (execution-routes.ts, batch-routes.ts). The batch
 * status is one of them because clients poll it (a 10,000-element batch is polled a hundred times a
 * second by the benchmark), and each poll through Express cost more than its queries.
 */
export function executionOperations(execution: ExecutionService, batches: BatchService): Record<HotOperation, ExecutionOperationCore> {
  return {
    async scoreScenario(caller, input) {
      const result = await execution.score(caller, String(input.query.name), input.body as Record<string, unknown>);
      return { status: 200, headers: { 'X-SCE-RunId': result.runId }, body: result };
    },

    async scoreAsync(caller, input) {
      const requestId = await execution.submitAsync(caller, input.params.name, input.body as Record<string, unknown>, {
        requestId: text(input.headers['x-sce-requestid']),
        callbackUrl: text(input.headers['x-sce-callbackurl']),
        callbackRetryCount: integer(input.headers['x-sce-callbackretrycount']),
        callbackRetryDelaySeconds: integer(input.headers['x-sce-callbackretrydelay']),
      });
      return { status: 202, headers: { 'X-SCE-RequestId': requestId }, body: { requestId } };
    },

    async getAsyncScoreResult(caller, input) {
      const outcome = await execution.asyncResult(caller, input.params.name, String(input.headers['x-sce-requestid']));
      if (outcome.finished) return { status: 200, body: outcome.result };
      return { status: 202, body: { requestId: outcome.requestId, state: outcome.state } };
    },

    async getBatchStatus(caller, input) {
      return { status: 200, body: await batches.status(caller, input.params.batchTaskId) };
    },
  };
}
