import { optionalDateTimeParameter } from '../http/date-time-parameter.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioScopedHandlers } from '../scenarios/scenario-answers.js';
import type { StatisticsService } from './statistics-service.js';

export type StatisticsHandlers = Pick<OperationHandlers, 'getScenarioStatistics'>;

/** HTTP in/out of the run statistics; the rules live in StatisticsService. Requests reach here validated by the spec. */
export const createStatisticsHandlers: ScenarioScopedHandlers<StatisticsService, StatisticsHandlers> = (
  statistics,
  answer,
) => {
  return {
    async getScenarioStatistics(request) {
      // The window is checked before the actor: a malformed date is a 400 whoever asks.
      const window = {
        from: optionalDateTimeParameter(request.query.from, 'query.from'),
        to: optionalDateTimeParameter(request.query.to, 'query.to'),
      };
      return answer(200, (actor) => statistics.forScenario(actor, request.params.id, window))(request);
    },
  };
};
