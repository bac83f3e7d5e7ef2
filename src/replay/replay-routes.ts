import { optionalDateTimeParameter } from '../http/date-time-parameter.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioScopedHandlers } from '../scenarios/scenario-answers.js';
import type { ReplayService } from './replay-service.js';

export type ReplayHandlers = Pick<OperationHandlers, 'listReplays' | 'startReplay' | 'getReplay' | 'cancelReplay'>;

/** HTTP in/out of the replay operations; the rules live in ReplayService. Requests reach here validated by the spec. */
export const createReplayHandlers: ScenarioScopedHandlers<ReplayService, ReplayHandlers> = (replays, answer) => {
  return {
    listReplays: answer(200, (actor, { params, query }) => replays.list(actor, params.id, query.cursor, query.limit)),
    startReplay: answer(202, (actor, { user, params, body }) => {
      const { filter, ...rest } = body;
      const parsed = filter && {
        ...filter,
        from: optionalDateTimeParameter(filter.from, 'body.filter.from'),
        to: optionalDateTimeParameter(filter.to, 'body.filter.to'),
      };
      return replays.start(actor, user.id, params.id, { ...rest, filter: parsed });
    }),
    getReplay: answer(200, (actor, { params }) => replays.get(actor, params.id, params.replayId)),
    cancelReplay: answer(200, (actor, { user, params }) =>
      replays.cancel(actor, user.username, params.id, params.replayId),
    ),
  };
};
