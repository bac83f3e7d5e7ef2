import type { OperationHandlers } from '../http/operation-handler.js';
import { scenarioActorOf } from '../scenarios/scenario-access.js';
import type { Services } from '../services.js';

export type StatisticsOperation = 'getScenarioStatistics';

/** HTTP in/out of the run statistics; the rules live in StatisticsService. Requests reach here validated by the spec. */
export function createStatisticsHandlers(services: Pick<Services, 'statistics' | 'users'>): Pick<OperationHandlers, StatisticsOperation> {
  return {
    async getScenarioStatistics(request) {
      const { from, to } = request.query;
      const actor = await scenarioActorOf(request, services.users);
      return { status: 200, body: await services.statistics.service.forScenario(actor, request.params.id, { from, to }) };
    },
  };
}
