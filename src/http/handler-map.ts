import type { OperationHandlers } from '../../generated/routes.js';
import { createBatchHandlers } from '../execution/batch-routes.js';
import { createExecutionHandlers } from '../execution/execution-routes.js';
import { createInternalDataHandlers } from '../internal-data/internal-data-routes.js';
import { createRecordsHandlers } from '../records/records-routes.js';
import { createReplayHandlers } from '../replay/replay-routes.js';
import { createScenarioHandlers } from '../scenarios/scenario-routes.js';
import type { Services } from '../services.js';

/** Every operation of the spec bound to its handler; `tsc` fails if one is missing. */
export function createHandlerMap(services: Services): OperationHandlers {
  return {
    ...createScenarioHandlers(services),
    ...createExecutionHandlers(services),
    ...createBatchHandlers(services),
    ...createInternalDataHandlers(services),
    ...createRecordsHandlers(services),
    ...createReplayHandlers(services),
  };
}
