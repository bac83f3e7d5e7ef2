import type { components } from '../../generated/api-types.js';
import { resolveOwner, type ResourceOwner, type UserLookup } from '../auth/access-context.js';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';

/**
 * Who acts: the owner resolved from the `context` (see resolveOwner) and whether the requester is
 * an admin. Name-addressed operations (import, export, rename) work on `owner`'s scenarios;
 * id-addressed operations need the scenario to belong to `owner` unless the requester is an admin
 * (admins may act on every scenario; the scenario's own owner is then used, e.g. for lookups).
 */
export interface ScenarioActor {
  owner: ResourceOwner;
  isAdmin: boolean;
}

/** A scenario an actor may act on. */
export interface AccessibleScenario {
  id: number;
  ownerId: number;
  name: string;
}

/**
 * The one ownership rule of id-addressed scenario operations, for other features whose resources
 * hang off a scenario (decision records, run statistics, replays): the scenarios feature implements
 * it (ScenarioService).
 */
export interface ScenarioAccess {
  /** The scenario with this wire id when the actor may act on it: 404 SCENARIO_NOT_FOUND when unknown (or not an id of ours), 403 FORBIDDEN when another owner's and the actor is no admin. */
  accessible(actor: ScenarioActor, id: string): Promise<AccessibleScenario>;
}

/** What every scenario management request carries to say who acts on whose scenarios (the typed request has both). */
export interface ManagementRequest {
  user: AuthenticatedUser;
  query: { context?: components['schemas']['AccessControlContext'] };
}

/** The actor of a bearer request: its `context` read against the token's user (403/404/400 as resolveOwner decides). */
async function scenarioActorOf({ user, query }: ManagementRequest, users: UserLookup): Promise<ScenarioActor> {
  return { owner: await resolveOwner(user, query.context, users), isAdmin: user.isAdmin };
}

/** A bearer request's actor, with the users bound: what the scenario-scoped handlers are given (src/handler-map.ts). */
export type ScenarioActorOf = (request: ManagementRequest) => Promise<ScenarioActor>;

export function scenarioActors(users: UserLookup): ScenarioActorOf {
  return (request) => scenarioActorOf(request, users);
}
