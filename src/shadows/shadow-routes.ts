import type { OperationHandlers } from '../http/operation-handler.js';
import { scenarioActorOf, type ManagementRequest } from '../scenarios/scenario-access.js';
import type { Services } from '../services.js';

export type ShadowOperation = 'listShadows' | 'attachShadow' | 'getShadow' | 'stopShadow' | 'startShadow';

/** HTTP in/out of the shadow operations; the rules live in ShadowService. Requests reach here validated by the spec. */
export function createShadowHandlers(services: Pick<Services, 'shadows' | 'users'>): Pick<OperationHandlers, ShadowOperation> {
  const shadows = services.shadows.service;
  const actorOf = (request: ManagementRequest) => scenarioActorOf(request, services.users);

  return {
    async listShadows(request) {
      return { status: 200, body: await shadows.list(await actorOf(request), request.params.id) };
    },

    async attachShadow(request) {
      return { status: 201, body: await shadows.attach(await actorOf(request), request.user.username, request.params.id, request.body) };
    },

    async getShadow(request) {
      return { status: 200, body: await shadows.get(await actorOf(request), request.params.id, request.params.shadowId) };
    },

    async stopShadow(request) {
      return { status: 200, body: await shadows.stop(await actorOf(request), request.params.id, request.params.shadowId) };
    },

    async startShadow(request) {
      return { status: 200, body: await shadows.start(await actorOf(request), request.params.id, request.params.shadowId) };
    },
  };
}
