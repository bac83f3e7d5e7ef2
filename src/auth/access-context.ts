import type { Request } from 'express';
import { ForbiddenError } from '../errors/forbidden-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { AuthenticatedUser } from '../http/request-context.js';
import type { UserService } from './user-service.js';

interface AccessActor {
  userId?: number;
  username?: string;
}

interface AccessControlContext {
  requester: AccessActor;
  owner?: AccessActor;
}

/** The user whose resources a management request addresses. */
export interface ResourceOwner {
  id: number;
  username: string;
}

function names(actor: AccessActor, user: { id: number; username: string }): boolean {
  return (actor.userId === undefined || actor.userId === user.id) && (actor.username === undefined || actor.username === user.username);
}

/**
 * Reads the `context` query parameter (validated by the spec) against the token's identity:
 * the requester must be the token's user (403 CONTEXT_MISMATCH otherwise); `owner` defaults to
 * the requester and may name another user only for admins.
 */
export async function resolveOwner(request: Request, users: UserService): Promise<ResourceOwner> {
  const user = request.user as AuthenticatedUser;
  const context = request.query.context as unknown as AccessControlContext | undefined;
  if (context && !names(context.requester, user)) {
    throw new ForbiddenError('The context names a requester other than the authenticated user.', 'CONTEXT_MISMATCH', [{ path: 'query.context.requester', message: `must be the token's user "${user.username}"` }]);
  }
  const owner = context?.owner;
  if (!owner || names(owner, user)) return { id: user.id, username: user.username };
  if (!user.isAdmin) {
    throw new ForbiddenError("Only admins may act on another user's scenarios.", 'FORBIDDEN', [{ path: 'query.context.owner', message: 'must be the requester unless the requester is an admin' }]);
  }
  const found = owner.username !== undefined ? await users.findByUsername(owner.username) : await users.findById(owner.userId as number);
  if (!found || (owner.userId !== undefined && found.id !== owner.userId)) {
    throw new NotFoundError('The owner named in the context does not exist.', 'SCENARIO_NOT_FOUND', [{ path: 'query.context.owner', message: 'no such user' }]);
  }
  return { id: found.id, username: found.username };
}
