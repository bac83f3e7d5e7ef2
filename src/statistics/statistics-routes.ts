import type { OperationHandlers } from '../http/operation-handler.js';
import { scenarioActor } from '../scenarios/scenario-actor.js';
import type { Services } from '../services.js';

export type StatisticsOperation = 'getScenarioStatistics';

/** HTTP in/out of the run statistics; the rules live in StatisticsService. Requests reach here validated by the spec. */
export function createStatisticsHandlers(services: Pick<Services, 'statistics' | 'users'>): Pick<OperationHandlers, StatisticsOperation> {
  return {
    async getScenarioStatistics(request) {
      const { from, to } = request.query;
      const actor = await scenarioActor(request, services.users);
      return { status: 200, body: await services.statistics.service.forScenario(actor, request.params.id, { from, to }) };
    },
  };
}
