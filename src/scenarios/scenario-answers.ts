import type { ManagementRequest, ScenarioActor, ScenarioActorOf } from './scenario-access.js';

/**
 * A handler of a scenario-scoped operation that answers one status with what its service gives the request's
 * actor. The actor comes first (the `context` read against the token: 400, 403 or 404 before any work), then
 * `act`. The handler it returns takes its request type from the operation slot it is put in, so `tsc` still
 * checks the parameters `act` reads and the body it answers against the spec, in the routes file.
 */
export type ScenarioAnswer = <const Status extends number, Request extends ManagementRequest, Body>(
  status: Status,
  act: (actor: ScenarioActor, request: Request) => Promise<Body>,
) => (request: Request) => Promise<{ status: Status; body: Body }>;

/** The ScenarioAnswer of the routes given `actorOf` (scenarios, decision records, replays, shadows, splits). */
export function scenarioAnswers(actorOf: ScenarioActorOf): ScenarioAnswer {
  return (status, act) => async (request) => ({ status, body: await act(await actorOf(request), request) });
}

/**
 * The handler factory of a feature's scenario-scoped operations (decision records, replays, statistics, shadows,
 * splits): its service and the ScenarioAnswer in, its handlers out. A routes file declares its factory with this type
 * and `Pick<OperationHandlers, …>` as `Handlers`, so each handler is still checked against its operation's slot, there.
 */
export type ScenarioScopedHandlers<Service, Handlers> = (service: Service, answer: ScenarioAnswer) => Handlers;
