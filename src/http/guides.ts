import { readdirSync, readFileSync } from 'node:fs';
import express, { type Router } from 'express';
import { NotFoundError } from '../errors/not-found-error.js';
import { ROUTE_MATCHING } from './route-matching.js';

const DOCS_DIR = new URL('../../docs/', import.meta.url);
const README = new URL('../../README.md', import.meta.url);

/** Where the served document's links point: `/docs/guides/<name>` for `docs/<name>.md`, and `readme` for README.md. */
const GUIDES_PATH = '/docs/guides';

/** The guides by name, read once: `docs/*.md` and the README. Nothing else of the checkout is reachable. */
export function loadGuides(): Map<string, string> {
  const guides = new Map<string, string>([['readme', readFileSync(README, 'utf8')]]);
  for (const file of readdirSync(DOCS_DIR)
    .filter((name) => name.endsWith('.md'))
    .sort()) {
    guides.set(file.slice(0, -'.md'.length), readFileSync(new URL(file, DOCS_DIR), 'utf8'));
  }
  return guides;
}

/**
 * `GET /docs/guides/<name>`: the guides as plain Markdown (`text/markdown`), so that the links of the served
 * document (`externalDocs`, descriptions) resolve against any deployment; `/docs/guides` lists them. A name
 * is looked up in the set read at start-up (`<name>` or `<name>.md`), never joined to a path.
 */
export function guidesRouter(guides: Map<string, string>): Router {
  const router = express.Router(ROUTE_MATCHING);
  const index = ['# Guides', '', ...[...guides.keys()].map((name) => `- [${name}](${GUIDES_PATH}/${name})`), ''].join(
    '\n',
  );
  const markdown = 'text/markdown; charset=utf-8';
  router.get(GUIDES_PATH, (_request, response) => {
    response.type(markdown).send(index);
  });
  router.get(`${GUIDES_PATH}/:name`, (request, response, next) => {
    const text = guides.get(request.params.name.replace(/\.md$/, ''));
    // Answered here: nothing under /docs/guides falls through to the interactive view's static files.
    if (text === undefined)
      next(new NotFoundError(`No guide ${request.params.name}; ${GUIDES_PATH} lists them.`, 'ROUTE_NOT_FOUND'));
    else response.type(markdown).send(text);
  });
  return router;
}
