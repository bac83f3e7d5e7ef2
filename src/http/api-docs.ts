import { readFileSync } from 'node:fs';
import express, { type Router } from 'express';
import { ROUTE_MATCHING } from './route-matching.js';
import swaggerUi from 'swagger-ui-express';
import { guidesRouter, loadGuides } from './guides.js';

const SPEC_PATH = new URL('../../spec/openapi.json', import.meta.url);

export function loadSpec(): Record<string, unknown> {
  return JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as Record<string, unknown>;
}

/**
 * Runs in the browser (swagger-ui-express writes the function's source into the page): Swagger UI parses every
 * answer whose Content-Type contains "json" as one JSON document, so an NDJSON stream (getBatchResults) showed
 * "can't parse JSON". The view shows it as the text it is; the headers list the type as sent.
 */
function showStreamsAsText(response: { headers?: Record<string, string> }) {
  const sent = response.headers?.['content-type'];
  if (sent && /ndjson/i.test(sent) && response.headers) {
    response.headers['content-type'] = 'text/plain; charset=utf-8';
    response.headers['content-type (as sent)'] = sent;
  }
  return response;
}

/**
 * `GET /openapi.json` serves the contract; `/docs` an interactive view that can call the API; `/docs/guides`
 * the guides the document links to.
 */
export function apiDocsRouter(spec: Record<string, unknown>): Router {
  const router = express.Router(ROUTE_MATCHING);
  router.use(guidesRouter(loadGuides()));
  router.get('/openapi.json', (_request, response) => {
    response.json(spec);
  });
  router.use('/docs', swaggerUi.serve);
  router.get(
    '/docs',
    swaggerUi.setup(undefined, {
      customSiteTitle: 'Scenario Scoring Service API',
      swaggerOptions: {
        url: '/openapi.json',
        persistAuthorization: true,
        tryItOutEnabled: true,
        displayOperationId: true,
        responseInterceptor: showStreamsAsText,
      },
    }),
  );
  return router;
}
