import type { RequestHandler } from 'express';
import type { RouteDefinition } from '../../generated/routes.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';

/**
 * Defence in depth, in front of each handler: the request must have been authenticated for this
 * very operation. `authenticate` (src/auth/authenticate.ts) already did that for every request
 * routed here; if the two ever disagreed (a route-matching bug), the request gets 401 and an error
 * is logged instead of a handler running without a user.
 */
export function requireAuthentication(route: RouteDefinition): RequestHandler {
  return (request, _response, next) => {
    if (
      route.security.length === 0 ||
      (request.user !== undefined && request.authenticatedOperation === route.operationId)
    ) {
      next();
      return;
    }
    request.log.error(
      { operationId: route.operationId, path: request.path, authenticatedOperation: request.authenticatedOperation },
      'request reached a handler without authentication for its operation',
    );
    next(
      new UnauthorizedError(
        `This operation needs ${route.security.includes('bearerAuth') ? 'a bearer access token' : 'a score token'}.`,
        'UNAUTHENTICATED',
      ),
    );
  };
}
