import type { OperationHandlers } from '../http/operation-handler.js';
import type { ExecutionService } from './execution-service.js';

/** How long a client is told to wait before asking again for an unfinished async result (as for batch results). */
const RETRY_AFTER_SECONDS = 1;

/** The execution hot paths: served on the fast lane (src/http/fast-lane.ts), or through Express when SCORE_FAST_LANE=false. */
export type ExecutionOperation = 'scoreScenario' | 'scoreAsync' | 'getAsyncScoreResult';

/** What the execution handlers need. */
export interface ExecutionHandlerDeps {
  execution: ExecutionService;
}

/**
 * HTTP in/out of synchronous scoring, async submission and async result; the rules live in
 * ExecutionService. The same handlers serve both entry points: the fast lane and the Express adapter
 * each build the typed request and send the reply.
 */
export function createExecutionHandlers({
  execution,
}: ExecutionHandlerDeps): Pick<OperationHandlers, ExecutionOperation> {
  return {
    async scoreScenario({ user, requestId, query, body }) {
      const result = await execution.score(user, query.name, body, requestId);
      return { status: 200, headers: { 'X-SCE-RunId': result.runId }, body: result };
    },

    async scoreAsync({ user, params, headers, body }) {
      const requestId = await execution.submitAsync(user, params.name, body, {
        requestId: headers['x-sce-requestid'],
        callbackUrl: headers['x-sce-callbackurl'],
        callbackRetryCount: headers['x-sce-callbackretrycount'],
        callbackRetryDelaySeconds: headers['x-sce-callbackretrydelay'],
      });
      return { status: 202, headers: { 'X-SCE-RequestId': requestId }, body: { requestId } };
    },

    async getAsyncScoreResult({ user, params, headers }) {
      const outcome = await execution.asyncResult(user, params.name, headers['x-sce-requestid']);
      if (outcome.finished) return { status: 200, body: outcome.result };
      return {
        status: 202,
        headers: { 'Retry-After': RETRY_AFTER_SECONDS },
        body: { requestId: outcome.requestId, state: outcome.state },
      };
    },
  };
}
