import type { components } from '../../generated/api-types.js';
import { parseRecordId } from '../db/record-id.js';
import type { ErrorDetail } from '../errors/app-error.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { ForbiddenError } from '../errors/forbidden-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { AuthenticatedUser } from './authenticated-user.js';
import type { UserService } from './user-service.js';

type AccessControlContext = components['schemas']['AccessControlContext'];
type ContextUser = components['schemas']['User'];
type LegacyAccessActor = components['schemas']['LegacyAccessActor'];

/** What resolving an owner reads of the users (UserService implements it). */
export type UserLookup = Pick<UserService, 'findById' | 'findByUsername'>;

/** The user whose resources a management request addresses. */
export interface ResourceOwner {
  id: number;
  username: string;
}

/** A user named in the context, and where (for error details). */
interface NamedUser {
  id?: string;
  username?: string;
  path: string;
}

function named(user: ContextUser | undefined, path: string): NamedUser | undefined {
  return user && { id: user.id, username: user.username, path };
}

function namedLegacy(actor: LegacyAccessActor | undefined, path: string): NamedUser | undefined {
  return actor && { id: actor.userId === undefined ? undefined : String(actor.userId), username: actor.username, path };
}

function isPresent<T>(value: T | undefined): value is T {
  return value !== undefined;
}

/** Whether `who` names `user`: every name given (id, username) must be the user's. */
function names(who: NamedUser, user: { id: number; username: string }): boolean {
  return (
    (who.id === undefined || who.id === String(user.id)) &&
    (who.username === undefined || who.username === user.username)
  );
}

/**
 * Reads the `context` query parameter (decoded by src/http/context-query.ts and validated by the
 * spec; absent is `{}`) against the token's identity. `{}` is the token's user acting on their own scenarios. The
 * requester (`actors.requester`, pre-1.9 `requester`), when named, must be the token's user (403
 * CONTEXT_MISMATCH). The resource owner (`actors.resourceOwner`, `resourceOwnerOrRequester`, pre-1.9
 * `owner`) defaults to the token's user; another user only for admins (403 FORBIDDEN), and every
 * place that names an owner must name the same one (400). Users are named by id or username.
 */
export async function resolveOwner(
  user: AuthenticatedUser,
  given: AccessControlContext | undefined,
  users: UserLookup,
): Promise<ResourceOwner> {
  const context = given ?? {};
  const base = 'query.context';
  const requesters = [
    named(context.actors?.requester, `${base}.actors.requester`),
    namedLegacy(context.requester, `${base}.requester`),
  ].filter(isPresent);
  const owners = [
    named(context.actors?.resourceOwner, `${base}.actors.resourceOwner`),
    named(context.resourceOwnerOrRequester, `${base}.resourceOwnerOrRequester`),
    namedLegacy(context.owner, `${base}.owner`),
  ].filter(isPresent);

  const unnamed = [...requesters, ...owners].filter((who) => who.id === undefined && who.username === undefined);
  if (unnamed.length > 0) {
    throw new BadRequestError(
      `The context names a user without an id or a username (${unnamed[0].path}).`,
      'VALIDATION_FAILED',
      unnamed.map((who) => ({ path: who.path, message: 'must name the user by `id` or `username`' })),
    );
  }
  const impostors = requesters.filter((who) => !names(who, user));
  if (impostors.length > 0) {
    throw new ForbiddenError(
      'The context names a requester other than the authenticated user.',
      'CONTEXT_MISMATCH',
      impostors.map((who) => ({ path: who.path, message: `must be the token's user "${user.username}"` })),
    );
  }
  const others = owners.filter((who) => !names(who, user));
  if (others.length === 0) return { id: user.id, username: user.username };
  if (!user.isAdmin) {
    throw new ForbiddenError(
      "Only admins may act on another user's scenarios.",
      'FORBIDDEN',
      others.map((who) => ({ path: who.path, message: 'must be the requester unless the requester is an admin' })),
    );
  }
  if (others.length < owners.length) throw conflictingOwners(owners);
  const found = await Promise.all(others.map((who) => findNamed(who, users)));
  const owner = found[0];
  if (found.some((candidate) => candidate.id !== owner.id)) throw conflictingOwners(owners);
  return owner;
}

async function findNamed(who: NamedUser, users: UserLookup): Promise<ResourceOwner> {
  const recordId = who.id === undefined ? undefined : parseRecordId(who.id);
  const found =
    who.username !== undefined
      ? await users.findByUsername(who.username)
      : recordId === undefined
        ? undefined
        : await users.findById(recordId);
  if (!found || !names(who, found)) {
    throw new NotFoundError('The owner named in the context does not exist.', 'SCENARIO_NOT_FOUND', [
      { path: who.path, message: 'no such user' },
    ]);
  }
  return { id: found.id, username: found.username };
}

function conflictingOwners(owners: NamedUser[]): BadRequestError {
  const details: ErrorDetail[] = owners.map((who) => ({
    path: who.path,
    message: `names ${who.username !== undefined ? `"${who.username}"` : `user id ${who.id}`}`,
  }));
  return new BadRequestError(
    'The context names different resource owners; name one (actors.resourceOwner and resourceOwnerOrRequester must agree).',
    'VALIDATION_FAILED',
    details,
  );
}
