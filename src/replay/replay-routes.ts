import type { Request } from 'express';
import type { OperationHandlers } from '../../generated/routes.js';
import type { AuthenticatedUser } from '../http/request-context.js';
import { scenarioActorOf } from '../scenarios/scenario-access.js';
import type { Services } from '../services.js';
import type { ReplayRequestDto } from './replay-service.js';

export type ReplayOperation = 'startReplay' | 'getReplay';

/** HTTP in/out of the replay operations; the rules live in ReplayService. Requests reach here validated by the spec. */
export function createReplayHandlers(services: Services): Pick<OperationHandlers, ReplayOperation> {
  const replays = services.replay.service;
  const actorOf = (request: Request) => scenarioActorOf(request, services.users);
  const idOf = (request: Request): string => String(request.params.id);

  return {
    async startReplay(request, response) {
      const actor = await actorOf(request);
      const requesterId = (request.user as AuthenticatedUser).id;
      response.status(202).json(await replays.start(actor, requesterId, idOf(request), request.body as ReplayRequestDto));
    },

    async getReplay(request, response) {
      response.json(await replays.get(await actorOf(request), idOf(request), String(request.params.replayId)));
    },
  };
}
