import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';
import type passport from 'passport';
import type { RouteDefinition } from '../../generated/routes.js';
import type { AuthenticatedUser } from './authenticated-user.js';
import type { RefusalInfo } from './jwt-strategy.js';

/** A passport instance holding the `jwt` strategy (one per app, see src/app.ts). */
export type Authenticator = InstanceType<typeof passport.Authenticator>;
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import type { UserService } from './user-service.js';

/** The `key` query parameter, read from the raw URL (cheaper than a full query parse on the hot path). */
function keyParameter(url: string): string | undefined {
  const query = url.indexOf('?');
  if (query < 0) return undefined;
  for (const pair of url.slice(query + 1).split('&')) {
    if (pair.startsWith('key=')) {
      try {
        return decodeURIComponent(pair.slice(4).replace(/\+/g, ' '));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The score token of a request to `route`: the `Score-Token` header or the `key` query parameter, as the route allows. */
function scoreTokenFrom(headers: IncomingHttpHeaders, url: string, route: RouteDefinition): string | undefined {
  if (route.security.includes('scoreTokenHeader')) {
    const header = headers['score-token'];
    if (typeof header === 'string' && header) return header;
  }
  if (route.security.includes('scoreTokenQuery')) return keyParameter(url) || undefined;
  return undefined;
}

/**
 * The user whose score token a request to `route` carries: the one score-token check of both lanes
 * (Express, below, and the fast lane). 401 UNAUTHENTICATED without a token, INVALID_SCORE_TOKEN with
 * one that is unknown, rotated out or of a disabled user.
 */
export async function authenticateScoreToken(
  users: UserService,
  headers: IncomingHttpHeaders,
  url: string,
  route: RouteDefinition,
): Promise<AuthenticatedUser> {
  const token = scoreTokenFrom(headers, url, route);
  if (!token)
    throw new UnauthorizedError(
      'A score token is required: send it in the Score-Token header or the `key` query parameter.',
      'UNAUTHENTICATED',
    );
  const user = await users.authenticateScoreToken(token);
  if (!user) throw new UnauthorizedError('The score token is not valid.', 'INVALID_SCORE_TOKEN');
  return user;
}

/** Authenticates a request to one known operation by its security schemes (bearer JWT or score token). */
function authenticateRoute(route: RouteDefinition, users: UserService, authenticator: Authenticator): RequestHandler {
  if (route.security.includes('bearerAuth')) {
    return (request, response, next) => {
      authenticator.authenticate(
        'jwt',
        { session: false },
        (error: unknown, user: AuthenticatedUser | false, info?: Partial<RefusalInfo>) => {
          if (error) {
            next(error);
            return;
          }
          if (!user) {
            // Our own refusals say why; signature and expiry failures stay generic.
            next(
              new UnauthorizedError(
                typeof info?.reason === 'string'
                  ? `The bearer access token is refused: ${info.reason}.`
                  : 'A valid bearer access token is required (Authorization: Bearer <JWT>); it is missing, malformed, expired or not signed by a trusted key.',
              ),
            );
            return;
          }
          request.user = user;
          request.authMethod = 'bearer';
          request.authenticatedOperation = route.operationId;
          next();
        },
      )(request, response, next);
    };
  }
  return (request, _response, next) => {
    authenticateScoreToken(users, request.headers, request.originalUrl, route)
      .then((user) => {
        request.user = user;
        request.authMethod = 'scoreToken';
        request.authenticatedOperation = route.operationId;
        next();
      })
      .catch(next);
  };
}

/**
 * Authenticates every request to an operation of the spec before anything else looks at it (body
 * parsing, validation): an unauthenticated request gets 401 whatever else is wrong with it.
 * Bearer operations take a JWT; execution operations take the score token (header or `key`).
 * `matchRoute` finds the operation by the same rule Express routes by (the app passes src/http/route-matching.ts's), so
 * exactly the requests that reach a handler are authenticated; `requireAuthentication` checks it
 * again in front of every handler.
 */
export function authenticate(
  users: UserService,
  authenticator: Authenticator,
  matchRoute: (method: string, pathname: string) => RouteDefinition | undefined,
): RequestHandler {
  const byRoute = new Map<RouteDefinition, RequestHandler>();
  return (request, response, next) => {
    const route = matchRoute(request.method, request.path);
    if (!route || route.security.length === 0) {
      next();
      return;
    }
    let handler = byRoute.get(route);
    if (!handler) {
      handler = authenticateRoute(route, users, authenticator);
      byRoute.set(route, handler);
    }
    handler(request, response, next);
  };
}
