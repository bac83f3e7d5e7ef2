import type { Request, RequestHandler, Response } from 'express';
import type { OperationHandlers } from '../../generated/routes.js';
import type { Services } from '../services.js';
import { executionOperations, type ExecutionOperationCore, type HotOperation } from './execution-operations.js';

export type ExecutionOperation = Exclude<HotOperation, 'getBatchStatus'>;

/** The headers the execution operations declare (the validator has checked them). */
const DECLARED_HEADERS = ['x-sce-requestid', 'x-sce-callbackurl', 'x-sce-callbackretrycount', 'x-sce-callbackretrydelay'];

/** The Express entry point of a handler core (the fast lane is the other). */
export function expressHandler(core: ExecutionOperationCore): RequestHandler {
  return async (request: Request, response: Response) => {
    const headers: Record<string, unknown> = {};
    for (const name of DECLARED_HEADERS) {
      const value = request.get(name);
      if (value !== undefined) headers[name] = value;
    }
    const reply = await core({ id: (request.user as Express.User).id }, {
      query: request.query as Record<string, unknown>,
      params: request.params as Record<string, string>,
      headers,
      body: request.body,
    });
    for (const [name, value] of Object.entries(reply.headers ?? {})) response.setHeader(name, value);
    response.status(reply.status).json(reply.body);
  };
}

/** The Express entry points of the execution hot paths (used when SCORE_FAST_LANE=false, or for requests the fast lane leaves to Express). */
export function createExecutionHandlers(services: Services): Pick<OperationHandlers, ExecutionOperation> {
  const cores = executionOperations(services.execution.service, services.execution.batches);
  return {
    scoreScenario: expressHandler(cores.scoreScenario),
    scoreAsync: expressHandler(cores.scoreAsync),
    getAsyncScoreResult: expressHandler(cores.getAsyncScoreResult),
  };
}
