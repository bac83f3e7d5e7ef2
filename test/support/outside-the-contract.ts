import type { WireReply } from '../../src/http/operation-handler.js';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user.js';

/** A handler's request without the operation's types. */
export interface UntypedRequest {
  user: AuthenticatedUser;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

/**
 * A handler that answers whatever `handle` returns, whichever operation it stands in for: for tests
 * that break the contract on purpose (response validation, the contract kit) or add to it (a probe
 * header). Typed handlers cannot do that, which is the point of them.
 */
export function outsideTheContract(handle: (request: UntypedRequest) => Promise<WireReply>): never {
  return handle as never;
}
