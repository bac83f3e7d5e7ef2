import type { Request } from 'express';
import { resolveOwner } from '../auth/access-context.js';
import type { UserService } from '../auth/user-service.js';
import type { ScenarioActor } from './scenario-service.js';

/** Who acts in a management request: the owner its `context` resolves to, and whether the token's user is an admin. */
export async function scenarioActor(request: Request, users: UserService): Promise<ScenarioActor> {
  return { owner: await resolveOwner(request, users), isAdmin: request.user?.isAdmin === true };
}
