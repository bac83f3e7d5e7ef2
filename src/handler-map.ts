import type { AppDependencies } from './app.js';
import { createBatchHandlers } from './execution/batch-routes.js';
import { createExecutionHandlers } from './execution/execution-routes.js';
import type { OperationHandlers } from './http/operation-handler.js';
import { createInternalDataHandlers } from './internal-data/internal-data-routes.js';
import { createModelHandlers } from './models/model-routes.js';
import { createRecordsHandlers } from './records/records-routes.js';
import { createReplayHandlers } from './replay/replay-routes.js';
import { scenarioActors } from './scenarios/scenario-access.js';
import { scenarioAnswers } from './scenarios/scenario-answers.js';
import { createScenarioHandlers } from './scenarios/scenario-routes.js';
import { healthChecks, type Services } from './services.js';
import { createShadowHandlers } from './shadows/shadow-routes.js';
import { createSplitHandlers } from './shadows/split-routes.js';
import { createStatisticsHandlers } from './statistics/statistics-routes.js';

/**
 * Every operation of the spec bound to its handler; `tsc` fails if one is missing. Part of the composition root:
 * each feature's factory gets only what its handlers use, and src/http/ knows no feature.
 */
function createHandlerMap(services: Services): OperationHandlers {
  const users = services.users;
  const answer = scenarioAnswers(scenarioActors(users));
  return {
    ...createScenarioHandlers({ scenarios: services.scenarios, users }),
    ...createExecutionHandlers({ execution: services.execution.service }),
    ...createBatchHandlers({ batches: services.execution.batches }),
    ...createInternalDataHandlers({ internalData: services.internalData }),
    ...createStatisticsHandlers(services.statistics.service, answer),
    ...createRecordsHandlers(services.records.service, answer),
    ...createReplayHandlers(services.replay.service, answer),
    ...createModelHandlers({ models: services.models, tester: services.modelTester }),
    ...createShadowHandlers(services.shadows.service, answer),
    ...createSplitHandlers(services.shadows.splits, answer),
  };
}

/** The operations the fast lane serves (the execution hot paths), or undefined when SCORE_FAST_LANE=false. */
function fastLaneOperations(services: Services): AppDependencies['fastLane'] {
  if (!services.config.scoreFastLane) return undefined;
  // getBatchStatus too: clients poll it, and a poll through Express cost more than its queries.
  return {
    ...createExecutionHandlers({ execution: services.execution.service }),
    getBatchStatus: createBatchHandlers({ batches: services.execution.batches }).getBatchStatus,
  };
}

/**
 * What createApp takes, from the services: every operation's handler, the health checks, and the fast lane's
 * operations (unless SCORE_FAST_LANE=false). The service (src/main.ts), the test app and the benchmarks serve this.
 */
export function appDependencies(services: Services): AppDependencies {
  return {
    config: services.config,
    logger: services.logger,
    users: services.users,
    handlers: createHandlerMap(services),
    health: healthChecks(services),
    fastLane: fastLaneOperations(services),
    yamlParser: services.yamlParser,
  };
}
