import type { RequestHandler } from 'express';
import passport from 'passport';
import { routes, type RouteDefinition } from '../../generated/routes.js';
import type { AuthenticatedUser } from '../http/request-context.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import type { UserService } from './user-service.js';

interface CompiledRoute {
  method: string;
  pattern: RegExp;
  route: RouteDefinition;
}

function compileRoutes(): CompiledRoute[] {
  return routes.map((route) => ({
    method: route.method.toUpperCase(),
    pattern: new RegExp(`^${route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    route,
  }));
}

/** Finds the operation a request addresses, from the generated route table. */
export function createRouteMatcher(): (method: string, path: string) => RouteDefinition | undefined {
  const compiled = compileRoutes();
  return (method, path) => compiled.find((candidate) => candidate.method === method && candidate.pattern.test(path))?.route;
}

function scoreTokenFrom(request: Parameters<RequestHandler>[0], route: RouteDefinition): string | undefined {
  if (route.security.includes('scoreTokenHeader')) {
    const header = request.get('score-token');
    if (header) return header;
  }
  if (route.security.includes('scoreTokenQuery')) {
    const raw = new URL(request.originalUrl, 'http://local').searchParams.get('key');
    if (raw) return raw;
  }
  return undefined;
}

/**
 * Authenticates every request to an operation of the spec before anything else looks at it (body
 * parsing, validation): an unauthenticated request gets 401 whatever else is wrong with it.
 * Bearer operations take a JWT; execution operations take the score token (header or `key`).
 */
export function authenticate(users: UserService): RequestHandler {
  const matchRoute = createRouteMatcher();
  return (request, response, next) => {
    const route = matchRoute(request.method, request.path);
    if (!route || route.security.length === 0) {
      next();
      return;
    }
    if (route.security.includes('bearerAuth')) {
      passport.authenticate('jwt', { session: false }, (error: unknown, user: AuthenticatedUser | false) => {
        if (error) {
          next(error);
          return;
        }
        if (!user) {
          next(new UnauthorizedError('A valid bearer access token is required (Authorization: Bearer <JWT>); it is missing, malformed, expired or not signed by a trusted key.'));
          return;
        }
        request.user = user;
        request.authMethod = 'bearer';
        next();
      })(request, response, next);
      return;
    }
    const token = scoreTokenFrom(request, route);
    if (!token) {
      next(new UnauthorizedError('A score token is required: send it in the Score-Token header or the `key` query parameter.', 'UNAUTHENTICATED'));
      return;
    }
    users
      .authenticateScoreToken(token)
      .then((user) => {
        if (!user) {
          next(new UnauthorizedError('The score token is not valid.', 'INVALID_SCORE_TOKEN'));
          return;
        }
        request.user = user;
        request.authMethod = 'scoreToken';
        next();
      })
      .catch(next);
  };
}
