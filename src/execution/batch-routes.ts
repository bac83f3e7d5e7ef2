import type { Request } from 'express';
import type { OperationHandlers } from '../../generated/routes.js';
import { streamResponse } from '../http/stream-response.js';
import type { Services } from '../services.js';
import { BATCH_RESULTS_MEDIA_TYPES, batchResultsPreamble, formatBatchResults, type BatchResultsFormat } from './batch-results-format.js';
import type { BatchElementResult } from './batch-store.js';
import { executionOperations } from './execution-operations.js';
import { expressHandler } from './execution-routes.js';

export type BatchOperation = 'submitBatch' | 'getBatchStatus' | 'getBatchResults';

/** How long a client should wait before asking again for the results of an unfinished batch. */
const RETRY_AFTER_SECONDS = 1;

function caller(request: Request): { id: number } {
  return { id: (request.user as Express.User).id };
}

/** CSV when the client asks for text/csv (and prefers it to NDJSON); NDJSON otherwise. */
function formatOf(request: Request): BatchResultsFormat {
  return request.accepts(['application/x-ndjson', 'text/csv']) === 'text/csv' ? 'csv' : 'ndjson';
}

async function* encoded(format: BatchResultsFormat, pages: AsyncIterable<BatchElementResult[]>): AsyncGenerator<string> {
  yield batchResultsPreamble(format);
  for await (const page of pages) yield formatBatchResults(format, page);
}

export function createBatchHandlers(services: Services): Pick<OperationHandlers, BatchOperation> {
  const batches = services.execution.batches;
  return {
    async submitBatch(request, response) {
      const body = request.body as { scenarioName: string; parameters: Record<string, unknown>[] };
      const batchTaskId = await batches.submit(caller(request), body.scenarioName, body.parameters);
      response.status(202).json({ batchTaskId });
    },

    getBatchStatus: expressHandler(executionOperations(services.execution.service, batches).getBatchStatus),

    async getBatchResults(request, response) {
      const outcome = await batches.results(caller(request), request.params.batchTaskId as string);
      if (!outcome.finished) {
        response.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
        response.status(202).json(outcome.status);
        return;
      }
      const format = formatOf(request);
      await streamResponse(response, BATCH_RESULTS_MEDIA_TYPES[format], encoded(format, outcome.pages), request.log);
    },
  };
}
