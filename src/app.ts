import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import multer from 'multer';
import passport from 'passport';
import type { Logger } from 'pino';
import { routes } from '../generated/routes.js';
import { authenticate } from './auth/authenticate.js';
import { createJwtStrategy } from './auth/jwt-strategy.js';
import { requireAuthentication } from './auth/require-authentication.js';
import type { UserService } from './auth/user-service.js';
import type { AppConfig } from './config/config.js';
import { createErrorHandler, unknownRouteHandler } from './errors/error-handler.js';
import { API_ERROR_TRANSLATORS } from './http/error-body.js';
import { apiDocsRouter, loadSpec } from './http/api-docs.js';
import { bodyDepthLimit, jsonBody, requiredBody, yamlBody } from './http/body-parsers.js';
import { contextQuery } from './http/context-query.js';
import { mapQuery } from './http/map-query.js';
import { validatedAsGet } from './http/head-requests.js';
import { warmUpValidator } from './http/validator-warm-up.js';
import { healthRouter, type HealthChecks } from './http/health-router.js';
import { expressHandler } from './http/express-adapter.js';
import { createFastLane } from './http/fast-lane.js';
import { refuseInfiniteNumbers } from './http/finite-numbers.js';
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
import { canonicalQuery } from './http/query-string.js';

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

/**
 * The service's HTTP request listener (the fast lane for the execution hot paths, then the Express app), and
 * `warmUp`: builds every operation's request validator before the service listens (validator-warm-up.ts).
 */
export type ServiceApp = RequestListener & { warmUp(): Promise<number> };

/** The service's HTTP request listener: the fast lane for the execution hot paths, then the Express app. */
export function createApp(deps: AppDependencies): ServiceApp {
  const { config } = deps;
  const spec = loadSpec();
  // What each operation takes and answers (headers, bodies, uploads, media types), as the spec says.
  const shapeOf = (route: { operationId: string }) =>
    operationShape(spec as unknown as OpenApiDocument, route.operationId);
  const app = express();
  // Before any route: the one matching rule shared with the validator, authentication and the fast lane.
  applyRouteMatching(app);
  app.disable('x-powered-by');
  // API responses are not cached by validators; computing an ETag hashes every response body.
  app.set('etag', false);
  // node:querystring; the validator itself expands `filter[column]=value` (deepObject); `context` is decoded by contextQuery.
  app.set('query parser', 'simple');
  app.set('trust proxy', false);

  // One authenticator per app (not passport's global one): each app checks tokens with its own configuration.
  const authenticator = new passport.Authenticator();
  authenticator.use('jwt', createJwtStrategy(config.jwt, deps.users));
  app.use(requestContext(deps.logger));
  // One reading of the query and of an empty body on both lanes (the fast lane reads them the same way).
  app.use(canonicalQuery, noBytesNoBody);
  app.use(healthRouter(deps.health));
  app.use(apiDocsRouter(spec));

  app.use(authenticate(deps.users, authenticator, createRouteMatcher(routes)));
  // Bodies are read only for operations that declare one. Any other operation ignores a body, as the
  // spec gives it no body to answer about (no 400 for broken JSON on a GET, no 413 for its size).
  for (const route of routes) {
    const shape = shapeOf(route);
    if (!shape.takesBody) continue;
    const limit = route.operationId === 'submitBatch' ? config.limits.batchBodyBytes : config.limits.bodyBytes;
    if (shape.requiresBody) app[route.method](route.expressPath, requiredBody(shape.bodyMediaTypes));
    app[route.method](
      route.expressPath,
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
  const specValidator = OpenApiValidator.middleware({
    apiSpec: spec as never,
    validateApiSpec: false,
    // The first problem only: Ajv's every-problem mode copies its error list once per failing `$ref`'d
    // element, so its work grows with the square of the problems (an 800 KB import of 100,000 broken
    // scenarios held the event loop for ten minutes). Scenario documents still get every problem from the compiler.
    validateRequests: { allowUnknownQueryParameters: false, allErrors: false },
    // Responses are checked by checkResponses below, with checks compiled now rather than lazily.
    validateResponses: false,
    validateSecurity: false,
    // Formats checked in full: the fast mode takes `2026-11-23T25:00:00Z` and `2026-02-30` for date-times,
    // which the services could only turn into an invalid Date (a 500 instead of the 400 naming the field).
    ajvFormats: { mode: 'full' },
    // Multipart bodies are read by multipartBody above (so a malformed form is a 400, not a 500).
    fileUploader: false,
    operationHandlers: false,
  });
  app.use(validatedAsGet(specValidator));
  app.use(refuseInfiniteNumbers(spec as never));

  // VALIDATE_RESPONSES: every operation's response checks, compiled here (about 0.3 s) so that no
  // operation's first answer compiles them on the event loop. A break becomes a logged 500.
  const responseChecks = config.validateResponses
    ? compileResponseChecks(spec as unknown as OpenApiDocument)
    : undefined;
  for (const route of routes) {
    const check = responseChecks?.get(route.operationId);
    const handlers = [requireAuthentication(route), expressHandler(deps.handlers[route.operationId], shapeOf(route))];
    app[route.method](
      route.expressPath,
      ...(check ? [checkResponses(route.operationId, check), ...handlers] : handlers),
    );
  }

  app.use(unknownRouteHandler);
  app.use(createErrorHandler(API_ERROR_TRANSLATORS));
  // Once more, for what the error handler's own answer raises: with response validation (tests) an error
  // status the operation does not declare comes back as a contract break, to be answered as a JSON 500
  // (without this, Express's HTML error page).
  app.use(createErrorHandler(API_ERROR_TRANSLATORS));

  const laneOperations = routes.flatMap((route) => {
    const handle = deps.fastLane?.[route.operationId];
    return handle ? [{ route, handle }] : [];
  });
  const warmUp = () =>
    warmUpValidator(
      app,
      specValidator,
      routes.map((route) => ({
        method: route.method,
        path: route.path,
        bodyMediaTypes: shapeOf(route).bodyMediaTypes,
      })),
    );
  if (laneOperations.length === 0)
    return Object.assign((request: IncomingMessage, response: ServerResponse) => app(request, response), { warmUp });
  const fastLane = createFastLane({
    spec: spec as unknown as OpenApiDocument,
    operations: laneOperations,
    logger: deps.logger,
    users: deps.users,
    bodyLimitBytes: config.limits.bodyBytes,
    bodyDepthLimit: config.limits.bodyDepth,
    responseChecks,
  });
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    if (!fastLane(request, response)) app(request, response);
  };
  return Object.assign(listener, { warmUp });
}
