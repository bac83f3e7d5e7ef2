import type { OperationHandlers } from '../http/operation-handler.js';
import { batchResultsCsv } from './batch-results-format.js';
import type { BatchService } from './batch-service.js';

export type BatchOperation = 'submitBatch' | 'listBatches' | 'getBatchStatus' | 'getBatchResults';

/** How long a client should wait before asking again for the results of an unfinished batch. */
const RETRY_AFTER_SECONDS = 1;

/** What the batch handlers need. */
export interface BatchHandlerDeps {
  batches: BatchService;
}

/** HTTP in/out of batches; the rules live in BatchService. */
export function createBatchHandlers({ batches }: BatchHandlerDeps): Pick<OperationHandlers, BatchOperation> {
  return {
    async submitBatch({ user, body, headers }) {
      const batchTaskId = await batches.submit(user, body.scenarioName, body.parameters, headers['idempotency-key']);
      return { status: 202, body: { batchTaskId } };
    },

    async listBatches({ user, query }) {
      return { status: 200, body: await batches.list(user, query.limit ?? 20, query.cursor) };
    },

    async getBatchStatus({ user, params }) {
      return { status: 200, body: await batches.status(user, params.batchTaskId) };
    },

    async getBatchResults({ user, params, accepts }) {
      const outcome = await batches.results(user, params.batchTaskId);
      if (!outcome.finished)
        return { status: 202, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: outcome.status };
      // CSV when the client asks for text/csv (and prefers it to NDJSON); NDJSON otherwise.
      if (accepts(['application/x-ndjson', 'text/csv']) === 'text/csv')
        return { status: 200, contentType: 'text/csv', body: batchResultsCsv(outcome.pages) };
      return { status: 200, contentType: 'application/x-ndjson', body: outcome.pages };
    },
  };
}
