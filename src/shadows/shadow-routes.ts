import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioActorOf } from '../scenarios/scenario-access.js';
import type { ShadowService } from './shadow-service.js';

export type ShadowOperation = 'listShadows' | 'attachShadow' | 'getShadow' | 'stopShadow' | 'startShadow';

/** What the shadow handlers need. */
export interface ShadowHandlerDeps {
  shadows: ShadowService;
  actorOf: ScenarioActorOf;
}

/** HTTP in/out of the shadow operations; the rules live in ShadowService. Requests reach here validated by the spec. */
export function createShadowHandlers({
  shadows,
  actorOf,
}: ShadowHandlerDeps): Pick<OperationHandlers, ShadowOperation> {
  return {
    async listShadows(request) {
      return { status: 200, body: await shadows.list(await actorOf(request), request.params.id) };
    },

    async attachShadow(request) {
      return {
        status: 201,
        body: await shadows.attach(await actorOf(request), request.user.username, request.params.id, request.body),
      };
    },

    async getShadow(request) {
      return {
        status: 200,
        body: await shadows.get(await actorOf(request), request.params.id, request.params.shadowId),
      };
    },

    async stopShadow(request) {
      return {
        status: 200,
        body: await shadows.stop(await actorOf(request), request.params.id, request.params.shadowId),
      };
    },

    async startShadow(request) {
      return {
        status: 200,
        body: await shadows.start(await actorOf(request), request.params.id, request.params.shadowId),
      };
    },
  };
}
