import type { Request } from 'express';
import type { OperationHandlers } from '../../generated/routes.js';
import type { Services } from '../services.js';

export type ExecutionOperation = 'scoreScenario' | 'scoreAsync' | 'getAsyncScoreResult';

function caller(request: Request): { id: number } {
  return { id: (request.user as Express.User).id };
}

/** Optional integer header (the validator already checked its bounds). */
function intHeader(request: Request, name: string): number | undefined {
  const raw = request.get(name);
  return raw === undefined || raw === '' ? undefined : Number(raw);
}

export function createExecutionHandlers(services: Services): Pick<OperationHandlers, ExecutionOperation> {
  const execution = services.execution.service;
  return {
    async scoreScenario(request, response) {
      const result = await execution.score(caller(request), String(request.query.name), request.body as Record<string, unknown>);
      response.setHeader('X-SCE-RunId', result.runId);
      response.status(200).json(result);
    },

    async scoreAsync(request, response) {
      const requestId = await execution.submitAsync(caller(request), request.params.name as string, request.body as Record<string, unknown>, {
        requestId: request.get('x-sce-requestid') || undefined,
        callbackUrl: request.get('x-sce-callbackurl') || undefined,
        callbackRetryCount: intHeader(request, 'x-sce-callbackretrycount'),
        callbackRetryDelaySeconds: intHeader(request, 'x-sce-callbackretrydelay'),
      });
      response.setHeader('X-SCE-RequestId', requestId);
      response.status(202).json({ requestId });
    },

    async getAsyncScoreResult(request, response) {
      const outcome = await execution.asyncResult(caller(request), request.params.name as string, request.get('x-sce-requestid') as string);
      if (outcome.finished) response.status(200).json(outcome.result);
      else response.status(202).json({ requestId: outcome.requestId, state: outcome.state });
    },
  };
}
