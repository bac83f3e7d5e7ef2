import { createBatchHandlers } from '../execution/batch-routes.js';
import { createExecutionHandlers } from '../execution/execution-routes.js';
import { createInternalDataHandlers } from '../internal-data/internal-data-routes.js';
import { createModelHandlers } from '../models/model-routes.js';
import { createRecordsHandlers } from '../records/records-routes.js';
import { createReplayHandlers } from '../replay/replay-routes.js';
import { createScenarioHandlers } from '../scenarios/scenario-routes.js';
import { createShadowHandlers } from '../shadows/shadow-routes.js';
import { createSplitHandlers } from '../shadows/split-routes.js';
import type { Services } from '../services.js';
import { createStatisticsHandlers } from '../statistics/statistics-routes.js';
import type { OperationHandlers } from './operation-handler.js';

/** Every operation of the spec bound to its handler; `tsc` fails if one is missing. */
export function createHandlerMap(services: Services): OperationHandlers {
  return {
    ...createScenarioHandlers(services),
    ...createExecutionHandlers(services),
    ...createBatchHandlers(services),
    ...createInternalDataHandlers(services),
    ...createStatisticsHandlers(services),
    ...createRecordsHandlers(services),
    ...createReplayHandlers(services),
    ...createModelHandlers(services),
    ...createShadowHandlers(services),
    ...createSplitHandlers(services),
  };
}
