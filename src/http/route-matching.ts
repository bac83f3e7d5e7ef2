import type { Express, RouterOptions } from 'express';
import { match } from 'path-to-regexp';
import type { RouteDefinition } from '../../generated/routes.js';

/**
 * The one rule by which a request path selects an operation (docs/architecture.md, "Route
 * matching"). Express routes with it (app settings and every Router), and authentication, the score fast
 * lane and the answer to an unknown route (404, or 405 naming the methods the path takes) match with
 * `createRouteMatcher` and `createAllowedMethods`, built on the same path-to-regexp Express uses:
 * - case-sensitive: `/API/batch/score` is not `/api/batch/score` (404);
 * - the raw path as sent: a percent-escape never stands for a character of the route's literal
 *   text (`/api/%62atch/score`, `/api%2Fbatch/score` are no route), and empty, `.` and `..`
 *   segments are not collapsed; path parameters are decoded after matching (`a%2Fb` is `a/b`);
 * - one trailing slash is allowed (`/api/batch/score/`), two are not.
 */
export const ROUTE_MATCHING = { caseSensitive: true, strict: false } as const satisfies RouterOptions;

/** Applies the rule to an Express app; call it before the app's first route or middleware. */
export function applyRouteMatching(app: Express): void {
  app.set('case sensitive routing', ROUTE_MATCHING.caseSensitive);
  app.set('strict routing', ROUTE_MATCHING.strict);
}

export type RouteMatcher = (method: string, pathname: string) => RouteDefinition | undefined;

/** An operation found for a request, with its path parameters as sent (still percent-encoded). */
export interface OperationMatch {
  route: RouteDefinition;
  rawParams: Record<string, string>;
}

/**
 * The operation a request addresses, found as Express finds its route: the first route of the
 * table (Express registers them in this order) whose method and path match; HEAD is served by GET
 * routes. `pathname` is the raw path without the query string.
 */
export function createOperationMatcher(
  table: readonly RouteDefinition[],
): (method: string, pathname: string) => OperationMatch | undefined {
  const compiled = compiledRoutes(table);
  return (method, pathname) => {
    for (const candidate of compiled) {
      const methodMatches = candidate.method === method || (method === 'HEAD' && candidate.method === 'GET');
      if (!methodMatches) continue;
      const matched = candidate.matches(pathname);
      if (matched) return { route: candidate.route, rawParams: matched.params as Record<string, string> };
    }
    return undefined;
  };
}

/**
 * The methods of the operations whose path matches `pathname` (upper case, in the table's order, each once): a
 * request to such a path with another method is 405 with these in `Allow`; none is 404.
 */
export function createAllowedMethods(table: readonly RouteDefinition[]): (pathname: string) => string[] {
  const compiled = compiledRoutes(table);
  return (pathname) => [
    ...new Set(compiled.filter((candidate) => candidate.matches(pathname)).map((candidate) => candidate.method)),
  ];
}

/** createOperationMatcher, answering the operation only. */
export function createRouteMatcher(table: readonly RouteDefinition[]): RouteMatcher {
  const matchOperation = createOperationMatcher(table);
  return (method, pathname) => matchOperation(method, pathname)?.route;
}

/** Each route with its method in upper case and its path compiled under the one matching rule. */
function compiledRoutes(table: readonly RouteDefinition[]) {
  return table.map((route) => ({
    method: route.method.toUpperCase(),
    matches: match(route.expressPath, {
      sensitive: ROUTE_MATCHING.caseSensitive,
      trailing: !ROUTE_MATCHING.strict,
      decode: false,
    }),
    route,
  }));
}
