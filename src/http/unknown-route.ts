import type { RequestHandler } from 'express';
import type { RouteDefinition } from '../../generated/routes.js';
import { MethodNotAllowedError } from '../errors/method-not-allowed-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { createAllowedMethods } from './route-matching.js';

/**
 * After every route: a request no operation served. 405 when its path is an operation's (the `Allow` header names
 * the methods the path takes, as RFC 9110 asks), else 404 ROUTE_NOT_FOUND; both name the method and path as sent.
 */
export function unknownRoute(table: readonly RouteDefinition[]): RequestHandler {
  const allowedMethods = createAllowedMethods(table);
  return (request, _response, next) => {
    const allow = allowedMethods(request.path).join(', ');
    if (allow)
      next(new MethodNotAllowedError(`${request.method} is not allowed on ${request.path}; it takes ${allow}.`, allow));
    else next(new NotFoundError(`No route ${request.method} ${request.path}.`, 'ROUTE_NOT_FOUND'));
  };
}
