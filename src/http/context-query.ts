import type { Request, RequestHandler } from 'express';
import { parse as parseNested } from 'qs';
import { routes } from '../../generated/routes.js';
import { formDecode } from './query-string.js';
import { createRouteMatcher } from './route-matching.js';
import { BadRequestError } from '../errors/bad-request-error.js';

/**
 * Reads the `context` query parameter into one object before the request check sees it, in every
 * encoding clients use (spec parameter `Context`, style deepObject):
 *
 * - deepObject fields, nested to any depth: `context[actors][requester][username]=alice`. Generated
 *   clients send this. A generic bracket parser merges sibling fields shallowly (a second
 *   `context[actors][…]` field would drop the first), so the fields are parsed here, with qs.
 * - a deepObject field holding JSON text of an object, `context[actors]={"requester":…}`: how Swagger UI
 *   sends a nested object under deepObject.
 * - the whole context as URL-encoded JSON, `context=%7B…%7D`: what the API took before 1.9.
 * - nothing, or `context=`: serialisers write an empty object as nothing at all (openapi-fetch, Swagger
 *   UI), so an absent context is the empty one, `{}`: the token's user acting on their own scenarios.
 * - `[object Object]`, as a value or a field's value: what clients that write query values with
 *   `String(value)` send for an object (swagger-typescript-api; orval's fetch client for nested fields).
 *   What it held is lost. For a user who is not an admin every context means the same (the token's user
 *   on their own scenarios, or a refusal), so it is read as `{}` (that field left out): their generated
 *   client works as generated. An admin's may have named another owner: 400, naming the JSON form.
 *
 * What the fields mean is decided later (resolveOwner); this only decodes.
 */
export function contextQuery(spec: { paths: Record<string, Record<string, unknown>> }): RequestHandler {
  const matchRoute = createRouteMatcher(routes);
  const takesContext = new Set<string>(
    routes.filter((route) => declaresContext(spec.paths[route.path]?.[route.method])).map((route) => route.operationId),
  );
  return (request, _response, next) => {
    const route = matchRoute(request.method, request.path);
    if (!route || !takesContext.has(route.operationId)) {
      next();
      return;
    }
    const query = { ...(request.query as Record<string, unknown>) };
    const fieldNames = Object.keys(query).filter((name) => name.startsWith(`${PARAMETER}[`));
    for (const name of fieldNames) delete query[name];
    const context = fieldNames.length > 0 ? fromFields(request, query[PARAMETER]) : fromPlainValue(query[PARAMETER]);
    query[PARAMETER] = withoutStringifiedObjects(
      context,
      (request.user as { isAdmin?: boolean } | undefined)?.isAdmin === true,
    );
    // Express 5 computes `req.query` on each read; an own property is what the request check and the handler then see.
    Object.defineProperty(request, 'query', { value: query, writable: true, configurable: true, enumerable: true });
    next();
  };
}

const PARAMETER = 'context';
const CONTEXT_REF = '#/components/parameters/Context';

function declaresContext(operation: unknown): boolean {
  const parameters =
    (operation as { parameters?: Array<{ $ref?: string; name?: string; in?: string }> } | undefined)?.parameters ?? [];
  return parameters.some(
    (parameter) => parameter.$ref === CONTEXT_REF || (parameter.name === PARAMETER && parameter.in === 'query'),
  );
}

/** What `String(object)` writes: the object's content is not in it. */
const STRINGIFIED_OBJECT = '[object Object]';

/** The context without `[object Object]` values (see contextQuery); an admin's is refused instead. */
function withoutStringifiedObjects(context: unknown, isAdmin: boolean): unknown {
  if (context === STRINGIFIED_OBJECT) return lostObject(isAdmin, 'query.context') ?? {};
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return context;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    if (value === STRINGIFIED_OBJECT) lostObject(isAdmin, `query.context.${key}`);
    else kept[key] = value;
  }
  return kept;
}

function lostObject(isAdmin: boolean, path: string): undefined {
  if (!isAdmin) return undefined;
  throw new BadRequestError(
    'The context arrived as "[object Object]": the client wrote an object with String(), so whom it names is lost. Send the context as JSON (`context=%7B…%7D`) or as deepObject fields; the scenario management guide shows the one line each generated client needs.',
    'VALIDATION_FAILED',
    [{ path, message: 'is "[object Object]": send it as JSON or as deepObject fields' }],
  );
}

/** `context=<JSON>` as an object; absent or empty as `{}`; anything else as it came, for the request check to reject. */
function fromPlainValue(value: unknown): unknown {
  if (value === undefined || value === '') return {};
  if (typeof value !== 'string') return value;
  return parseJsonObject(value) ?? value;
}

/** `context[a][b]=…` fields (read from the raw query string, so nesting and encoding are exact). */
function fromFields(request: Request, plainValue: unknown): unknown {
  if (plainValue !== undefined) {
    throw new BadRequestError(
      'Send `context` once: either as deepObject fields (`context[actors][requester][username]=…`) or as JSON (`context=%7B…%7D`), not both.',
      'VALIDATION_FAILED',
      [{ path: 'query.context', message: 'is given both as JSON and as deepObject fields' }],
    );
  }
  const url = request.originalUrl;
  const queryString = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const fields = queryString
    .split('&')
    .filter((pair) => decodedName(pair).startsWith(`${PARAMETER}[`))
    .join('&');
  const parsed = parseNested(fields, {
    depth: 10,
    arrayLimit: 100,
    parameterLimit: 1000,
    allowPrototypes: false,
    allowDots: false,
  })[PARAMETER];
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return parsed;
  const context: Record<string, unknown> = { ...(parsed as Record<string, unknown>) };
  for (const [key, value] of Object.entries(context)) {
    if (typeof value === 'string') context[key] = parseJsonObject(value) ?? value;
  }
  return context;
}

function decodedName(pair: string): string {
  return formDecode(pair.split('=', 1)[0]);
}

/** The object a JSON text holds; undefined when it is not JSON of an object. */
function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
