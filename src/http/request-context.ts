import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { timeOrderedId } from '../ids/time-ordered-id.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    /** The authenticated user (passport's `req.user`); set by src/auth/authenticate.ts. */
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface User extends AuthenticatedUser {}
    interface Request {
      /** This request's id (X-Request-Id when the caller sent a sane one). */
      id: string;
      log: Logger;
      /** Which credential authenticated the request. */
      authMethod?: 'bearer' | 'scoreToken';
      /** The operation whose security schemes authenticated the request (checked again in front of its handler). */
      authenticatedOperation?: string;
    }
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's id, on both lanes: the caller's X-Request-Id when it is a sane one, else a new time-ordered id. */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const incoming = headers['x-request-id'];
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : timeOrderedId();
}

/**
 * Gives each request an id and a child logger (created on first use: most requests only log one
 * line, and a child logger per request costs more than a score), and logs one structured line
 * when the request ends.
 */
export function requestContext(logger: Logger): RequestHandler {
  return (request, response, next) => {
    const id = requestIdOf(request.headers);
    request.id = id;
    let child: Logger | undefined;
    Object.defineProperty(request, 'log', {
      configurable: true,
      enumerable: false,
      get: () => (child ??= logger.child({ requestId: id })),
    });
    response.setHeader('X-Request-Id', id);
    if (!logger.isLevelEnabled('info')) {
      next();
      return;
    }
    const started = process.hrtime.bigint();
    response.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // Only the path: query strings may carry a score token (`key`), which is never logged.
      logger.info(
        {
          requestId: id,
          method: request.method,
          path: request.path,
          status: response.statusCode,
          durationMs,
          user: request.user?.username,
        },
        'request',
      );
    });
    next();
  };
}
