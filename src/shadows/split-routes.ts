import type { OperationHandlers } from '../http/operation-handler.js';
import { scenarioActorOf, type ManagementRequest } from '../scenarios/scenario-access.js';
import type { Services } from '../services.js';

export type SplitOperation = 'createSplit' | 'getSplit' | 'promoteSplit' | 'endSplit';

/** HTTP in/out of the split operations; the rules live in SplitService. Requests reach here validated by the spec. */
export function createSplitHandlers(services: Pick<Services, 'shadows' | 'users'>): Pick<OperationHandlers, SplitOperation> {
  const splits = services.shadows.splits;
  const actorOf = (request: ManagementRequest) => scenarioActorOf(request, services.users);

  return {
    async createSplit(request) {
      return { status: 201, body: await splits.create(await actorOf(request), request.user.username, request.params.id, request.body) };
    },

    async getSplit(request) {
      return { status: 200, body: await splits.get(await actorOf(request), request.params.id, request.params.splitId) };
    },

    async promoteSplit(request) {
      return { status: 200, body: await splits.promote(await actorOf(request), request.user.username, request.params.id, request.params.splitId, request.body.version) };
    },

    async endSplit(request) {
      return { status: 200, body: await splits.end(await actorOf(request), request.user.username, request.params.id, request.params.splitId) };
    },
  };
}
