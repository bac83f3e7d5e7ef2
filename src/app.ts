import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import express from 'express';
import multer from 'multer';
import passport from 'passport';
import type { Logger } from 'pino';
import { routes } from '../generated/routes.js';
import { authenticate } from './auth/authenticate.js';
import { createJwtStrategy } from './auth/jwt-strategy.js';
import { requireAuthentication } from './auth/require-authentication.js';
import type { UserService } from './auth/user-service.js';
import type { AppConfig } from './config/config.js';
import { createErrorHandler } from './errors/error-handler.js';
import { API_ERROR_TRANSLATORS } from './http/error-body.js';
import { apiDocsRouter, loadSpec } from './http/api-docs.js';
import { bodyDepthLimit, yamlBody } from './http/body-parsers.js';
import { jsonBody } from './http/json-body.js';
import { contextQuery } from './http/context-query.js';
import { mapQuery } from './http/map-query.js';
import { healthRouter, type HealthChecks } from './http/health-router.js';
import { expressHandler } from './http/express-adapter.js';
import { createFastLane } from './http/fast-lane.js';
import type { OperationHandlers } from './http/operation-handler.js';
import { operationShape } from './http/operation-shape.js';
import { compileResponseChecks, type OpenApiDocument } from './http/operation-validator.js';
import { requestContext } from './http/request-context.js';
import { checkResponses } from './http/response-check.js';
import { multipartBody } from './http/multipart-body.js';
import { applyRouteMatching, createRouteMatcher } from './http/route-matching.js';
import { removeUploadsWhenDone } from './http/upload-cleanup.js';
import type { YamlBodyParser } from './http/yaml-body-parser.js';
import { importPrecheck } from './scenarios/import-precheck.js';
import { noBytesNoBody } from './http/body-presence.js';
import { parseQueryString } from './http/query-string.js';
import { compileRequestChecks, type RequestCheck } from './http/request-check.js';
import { unknownRoute } from './http/unknown-route.js';
import { checkMediaType, validateRequest } from './http/validate-request.js';

export interface AppDependencies {
  config: AppConfig;
  logger: Logger;
  users: UserService;
  handlers: OperationHandlers;
  health: HealthChecks;
  /**
   * The handlers served on the fast lane (src/http/fast-lane.ts), by operationId. Without them
   * (SCORE_FAST_LANE=false) every operation goes through Express.
   */
  fastLane?: Partial<OperationHandlers>;
  /** Parses YAML bodies off the event loop (services.yamlParser). */
  yamlParser: YamlBodyParser;
}

/** The service's HTTP request listener: the fast lane for the execution hot paths, then the Express app. */
export type ServiceApp = RequestListener;

/** The service's HTTP request listener: the fast lane for the execution hot paths, then the Express app. */
export function createApp(deps: AppDependencies): ServiceApp {
  const { config } = deps;
  const spec = loadSpec();
  // What each operation takes and answers (headers, bodies, uploads, media types), as the spec says.
  const shapeOf = (route: { operationId: string }) =>
    operationShape(spec as unknown as OpenApiDocument, route.operationId);
  const app = express();
  // Before any route: the one matching rule shared with authentication, the fast lane and unknownRoute.
  applyRouteMatching(app);
  app.disable('x-powered-by');
  // API responses are not cached by validators; computing an ETag hashes every response body.
  app.set('etag', false);
  // The one query parser of both lanes (query-string.ts); `context` and the `filter[…]`/`output[…]` maps are read
  // from the raw query by contextQuery and mapQuery.
  app.set('query parser', (text: string | null | undefined) => parseQueryString(text ?? ''));
  app.set('trust proxy', false);

  // One authenticator per app (not passport's global one): each app checks tokens with its own configuration.
  const authenticator = new passport.Authenticator();
  authenticator.use('jwt', createJwtStrategy(config.jwt, deps.users));
  app.use(requestContext(deps.logger));
  // No body bytes is no body, whatever the Content-Type (the fast lane reads it the same way).
  app.use(noBytesNoBody);
  app.use(healthRouter(deps.health));
  app.use(apiDocsRouter(spec));

  // Every operation's request check, compiled from the spec now (one Ajv), run by both lanes (request-check.ts).
  const requestChecks = compileRequestChecks(spec as unknown as OpenApiDocument);
  const checkOf = (route: { operationId: string }): RequestCheck => {
    const check = requestChecks.get(route.operationId);
    if (!check) throw new Error(`the spec has no operation ${route.operationId}`);
    return check;
  };

  app.use(authenticate(deps.users, authenticator, createRouteMatcher(routes)));
  // Bodies are read only for operations that declare one, and only of a media type they take (415 before
  // reading). Any other operation ignores a body, as the spec gives it no body to answer about (no 400 for
  // broken JSON on a GET, no 413 for its size).
  for (const route of routes) {
    const shape = shapeOf(route);
    if (!shape.takesBody) continue;
    const limit = route.operationId === 'submitBatch' ? config.limits.batchBodyBytes : config.limits.bodyBytes;
    app[route.method](
      route.expressPath,
      checkMediaType(checkOf(route)),
      jsonBody(limit),
      yamlBody(limit, config.limits.bodyDepth, deps.yamlParser),
      bodyDepthLimit(config.limits.bodyDepth),
    );
  }
  app.use(removeUploadsWhenDone);
  const storage = multer.diskStorage({ destination: tmpdir() });
  for (const route of routes) {
    if (!shapeOf(route).takesMultipart) continue;
    // Collections take large CSV files, models files up to MODEL_MAX_BYTES (multer stops reading past it:
    // 413, nothing stored); every other upload (a list of variables) is as small as a body.
    const fileSize =
      route.operationId === 'loadCollectionData'
        ? config.limits.uploadBytes
        : route.operationId === 'uploadModelVersion'
          ? config.models.maxBytes
          : config.limits.bodyBytes;
    app[route.method](route.expressPath, multipartBody({ storage, limits: { fileSize, files: 1, fields: 10 } }));
  }
  app.use(contextQuery(spec as never));
  app.use(mapQuery(spec as never));
  const importRoute = routes.find((route) => route.operationId === 'importScenarios');
  if (importRoute) app.post(importRoute.expressPath, importPrecheck);
  // VALIDATE_RESPONSES: every operation's response checks, compiled here (about 0.3 s) so that no
  // operation's first answer compiles them on the event loop. A break becomes a logged 500.
  const responseChecks = config.validateResponses
    ? compileResponseChecks(spec as unknown as OpenApiDocument)
    : undefined;
  for (const route of routes) {
    const check = responseChecks?.get(route.operationId);
    const handlers = [
      validateRequest(checkOf(route)),
      requireAuthentication(route),
      expressHandler(deps.handlers[route.operationId], shapeOf(route)),
    ];
    app[route.method](
      route.expressPath,
      ...(check ? [checkResponses(route.operationId, check), ...handlers] : handlers),
    );
  }

  app.use(unknownRoute(routes));
  app.use(createErrorHandler(API_ERROR_TRANSLATORS));
  // Once more, for what the error handler's own answer raises: with response validation (tests) an error
  // status the operation does not declare comes back as a contract break, to be answered as a JSON 500
  // (without this, Express's HTML error page).
  app.use(createErrorHandler(API_ERROR_TRANSLATORS));

  const laneOperations = routes.flatMap((route) => {
    const handle = deps.fastLane?.[route.operationId];
    return handle ? [{ route, handle }] : [];
  });
  if (laneOperations.length === 0)
    return (request: IncomingMessage, response: ServerResponse) => app(request, response);
  const fastLane = createFastLane({
    spec: spec as unknown as OpenApiDocument,
    operations: laneOperations,
    logger: deps.logger,
    users: deps.users,
    requestChecks,
    bodyLimitBytes: config.limits.bodyBytes,
    bodyDepthLimit: config.limits.bodyDepth,
    responseChecks,
  });
  return (request: IncomingMessage, response: ServerResponse) => {
    if (!fastLane(request, response)) app(request, response);
  };
}
