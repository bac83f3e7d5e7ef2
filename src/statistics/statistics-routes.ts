import type { OperationHandlers } from '../../generated/routes.js';
import { scenarioActor } from '../scenarios/scenario-actor.js';
import type { Services } from '../services.js';
import type { WindowQuery } from './statistics-service.js';

export type StatisticsOperation = 'getScenarioStatistics';

/** HTTP in/out of the run statistics; the rules live in StatisticsService. Requests reach here validated by the spec. */
export function createStatisticsHandlers(services: Services): Pick<OperationHandlers, StatisticsOperation> {
  return {
    async getScenarioStatistics(request, response) {
      const { from, to } = request.query as WindowQuery;
      const actor = await scenarioActor(request, services.users);
      response.json(await services.statistics.service.forScenario(actor, String(request.params.id), { from, to }));
    },
  };
}
