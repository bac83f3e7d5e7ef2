import type { OperationHandlers } from '../../generated/routes.js';
import { notImplemented } from '../http/not-implemented.js';
import type { Services } from '../services.js';

export type ExecutionOperation = 'scoreScenario' | 'scoreAsync' | 'getAsyncScoreResult' | 'submitBatch' | 'getBatchStatus';

export function createExecutionHandlers(_services: Services): Pick<OperationHandlers, ExecutionOperation> {
  return {
    scoreScenario: notImplemented('scoreScenario'),
    scoreAsync: notImplemented('scoreAsync'),
    getAsyncScoreResult: notImplemented('getAsyncScoreResult'),
    submitBatch: notImplemented('submitBatch'),
    getBatchStatus: notImplemented('getBatchStatus'),
  };
}
