import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioActorOf } from '../scenarios/scenario-access.js';
import type { SplitService } from './split-service.js';

export type SplitOperation = 'createSplit' | 'getSplit' | 'promoteSplit' | 'endSplit';

/** What the split handlers need. */
export interface SplitHandlerDeps {
  splits: SplitService;
  actorOf: ScenarioActorOf;
}

/** HTTP in/out of the split operations; the rules live in SplitService. Requests reach here validated by the spec. */
export function createSplitHandlers({ splits, actorOf }: SplitHandlerDeps): Pick<OperationHandlers, SplitOperation> {
  return {
    async createSplit(request) {
      return {
        status: 201,
        body: await splits.create(await actorOf(request), request.user.username, request.params.id, request.body),
      };
    },

    async getSplit(request) {
      return { status: 200, body: await splits.get(await actorOf(request), request.params.id, request.params.splitId) };
    },

    async promoteSplit(request) {
      return {
        status: 200,
        body: await splits.promote(
          await actorOf(request),
          request.user.username,
          request.params.id,
          request.params.splitId,
          request.body.version,
        ),
      };
    },

    async endSplit(request) {
      return {
        status: 200,
        body: await splits.end(
          await actorOf(request),
          request.user.username,
          request.params.id,
          request.params.splitId,
        ),
      };
    },
  };
}
