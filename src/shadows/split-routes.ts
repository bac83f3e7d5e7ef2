import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioScopedHandlers } from '../scenarios/scenario-answers.js';
import type { SplitService } from './split-service.js';

/** The split operations: the scenario's splits, and each split's life from creation to promotion or end. */
type SplitOperation = 'listSplits' | 'createSplit' | 'getSplit' | 'promoteSplit' | 'endSplit';
export type SplitHandlers = Pick<OperationHandlers, SplitOperation>;

/** HTTP in/out of the split operations; the rules live in SplitService. Requests reach here validated by the spec. */
export const createSplitHandlers: ScenarioScopedHandlers<SplitService, SplitHandlers> = (splits, answer) => {
  return {
    listSplits: answer(200, (actor, { params }) => splits.list(actor, params.id)),
    createSplit: answer(201, (actor, { user, params, body }) =>
      splits.create({ actor, createdBy: user.username, scenarioId: params.id, request: body }),
    ),
    getSplit: answer(200, (actor, { params }) => splits.get(actor, params.id, params.splitId)),
    promoteSplit: answer(200, (actor, { user, params, body }) =>
      splits.promote(actor, user.username, params.id, params.splitId, body.version),
    ),
    endSplit: answer(200, (actor, { user, params }) => splits.end(actor, user.username, params.id, params.splitId)),
  };
};
