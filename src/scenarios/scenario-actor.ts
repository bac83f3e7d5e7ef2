import type { components } from '../../generated/api-types.js';
import { resolveOwner } from '../auth/access-context.js';
import type { UserService } from '../auth/user-service.js';
import type { AuthenticatedUser } from '../http/request-context.js';
import type { ScenarioActor } from './scenario-service.js';

/** What every id-addressed scenario request carries to say who acts on whose scenarios (the typed request has both). */
export interface ManagementRequest {
  user: AuthenticatedUser;
  query: { context?: components['schemas']['AccessControlContext'] };
}

/** Who acts in a management request: the owner its `context` resolves to, and whether the token's user is an admin. */
export async function scenarioActor({ user, query }: ManagementRequest, users: UserService): Promise<ScenarioActor> {
  return { owner: await resolveOwner(user, query.context, users), isAdmin: user.isAdmin };
}
