import { optionalDateTimeParameter } from '../http/date-time-parameter.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioActorOf } from '../scenarios/scenario-access.js';
import type { StatisticsService } from './statistics-service.js';

export type StatisticsOperation = 'getScenarioStatistics';

/** HTTP in/out of the run statistics; the rules live in StatisticsService. Requests reach here validated by the spec. */
/** What the statistics handler needs. */
export interface StatisticsHandlerDeps {
  statistics: StatisticsService;
  actorOf: ScenarioActorOf;
}

export function createStatisticsHandlers({
  statistics,
  actorOf,
}: StatisticsHandlerDeps): Pick<OperationHandlers, StatisticsOperation> {
  return {
    async getScenarioStatistics(request) {
      const from = optionalDateTimeParameter(request.query.from, 'query.from');
      const to = optionalDateTimeParameter(request.query.to, 'query.to');
      const actor = await actorOf(request);
      return { status: 200, body: await statistics.forScenario(actor, request.params.id, { from, to }) };
    },
  };
}
