import { optionalDateTimeParameter } from '../http/date-time-parameter.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioActorOf } from '../scenarios/scenario-access.js';
import type { ReplayService } from './replay-service.js';

export type ReplayOperation = 'listReplays' | 'startReplay' | 'getReplay' | 'cancelReplay';

/** What the replay handlers need. */
export interface ReplayHandlerDeps {
  replays: ReplayService;
  actorOf: ScenarioActorOf;
}

/** HTTP in/out of the replay operations; the rules live in ReplayService. Requests reach here validated by the spec. */
export function createReplayHandlers({
  replays,
  actorOf,
}: ReplayHandlerDeps): Pick<OperationHandlers, ReplayOperation> {
  return {
    async listReplays(request) {
      return {
        status: 200,
        body: await replays.list(await actorOf(request), request.params.id, request.query.cursor, request.query.limit),
      };
    },

    async startReplay(request) {
      const actor = await actorOf(request);
      const { filter, ...rest } = request.body;
      const parsed = filter && {
        ...filter,
        from: optionalDateTimeParameter(filter.from, 'body.filter.from'),
        to: optionalDateTimeParameter(filter.to, 'body.filter.to'),
      };
      return {
        status: 202,
        body: await replays.start(actor, request.user.id, request.params.id, { ...rest, filter: parsed }),
      };
    },

    async getReplay(request) {
      return {
        status: 200,
        body: await replays.get(await actorOf(request), request.params.id, request.params.replayId),
      };
    },

    async cancelReplay(request) {
      return {
        status: 200,
        body: await replays.cancel(
          await actorOf(request),
          request.user.username,
          request.params.id,
          request.params.replayId,
        ),
      };
    },
  };
}
