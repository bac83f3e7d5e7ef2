import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioScopedHandlers } from '../scenarios/scenario-answers.js';
import type { ShadowService } from './shadow-service.js';

export type ShadowHandlers = Pick<
  OperationHandlers,
  'listShadows' | 'attachShadow' | 'getShadow' | 'stopShadow' | 'startShadow'
>;

/** HTTP in/out of the shadow operations; the rules live in ShadowService. Requests reach here validated by the spec. */
export const createShadowHandlers: ScenarioScopedHandlers<ShadowService, ShadowHandlers> = (shadows, answer) => {
  return {
    listShadows: answer(200, (actor, { params }) => shadows.list(actor, params.id)),
    attachShadow: answer(201, (actor, { user, params, body }) =>
      shadows.attach({ actor, createdBy: user.username, scenarioId: params.id, request: body }),
    ),
    getShadow: answer(200, (actor, { params }) => shadows.get(actor, params.id, params.shadowId)),
    stopShadow: answer(200, (actor, { params }) => shadows.stop(actor, params.id, params.shadowId)),
    startShadow: answer(200, (actor, { params }) => shadows.start(actor, params.id, params.shadowId)),
  };
};
