import type { RequestHandler } from 'express';
import { NotImplementedError } from '../errors/not-implemented-error.js';

/** The handler of an operation the spec declares but the service does not implement yet. */
export function notImplemented(operationId: string): RequestHandler {
  return (_request, _response, next) => {
    next(new NotImplementedError(`Operation ${operationId} is declared in the contract but not implemented yet.`));
  };
}
