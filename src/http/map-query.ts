import type { RequestHandler } from 'express';
import { routes } from '../../generated/routes.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { createRouteMatcher } from './route-matching.js';
import { formDecode } from './query-string.js';

interface ParameterObject {
  name?: string;
  in?: string;
  style?: string;
  schema?: { type?: string; additionalProperties?: { type?: string } };
}

/**
 * Reads the query parameters that are maps of strings in deepObject style — `filter[column]=value`
 * (collection rows), `output[name]=value` (decision records) — from the raw query string, before the
 * request check sees them. The validator used before (express-openapi-validator) re-parsed each field with qs, which
 * (1) drops keys that are names of Object.prototype properties (`filter[constructor]`,
 * `output[toString]`, `output[__proto__]`: the filter silently vanished and every row matched), and
 * (2) decodes the value a second time (`%2B` became a space, `%26` cut the value short). Here each
 * key and value is decoded once, as the rest of the query is (`+` is a space), into an object without
 * a prototype; the request check then checks it against the schema (names, lengths, counts).
 */
export function mapQuery(spec: { paths: Record<string, Record<string, unknown>> }): RequestHandler {
  const matchRoute = createRouteMatcher(routes);
  const mapsByOperation = new Map<string, string[]>();
  for (const route of routes) {
    const names = stringMapParameters(spec.paths[route.path]?.[route.method]);
    if (names.length > 0) mapsByOperation.set(route.operationId, names);
  }
  return (request, _response, next) => {
    const route = matchRoute(request.method, request.path);
    const names = route ? mapsByOperation.get(route.operationId) : undefined;
    if (!names) {
      next();
      return;
    }
    const url = request.originalUrl;
    const pairs = url.includes('?') ? url.slice(url.indexOf('?') + 1).split('&') : [];
    const query = { ...(request.query as Record<string, unknown>) };
    for (const name of names) {
      const fields = Object.keys(query).filter((key) => key.startsWith(`${name}[`));
      if (fields.length === 0) continue;
      for (const key of fields) delete query[key];
      query[name] = mapOf(name, pairs);
    }
    // Express 5 computes `req.query` on each read; an own property is what the request check and the handler then see.
    Object.defineProperty(request, 'query', { value: query, writable: true, configurable: true, enumerable: true });
    next();
  };
}

/** The operation's query parameters in deepObject style whose values are strings keyed by any name. */
function stringMapParameters(operation: unknown): string[] {
  const parameters = (operation as { parameters?: ParameterObject[] } | undefined)?.parameters ?? [];
  return parameters
    .filter(
      (parameter) =>
        parameter.in === 'query' &&
        parameter.style === 'deepObject' &&
        parameter.schema?.type === 'object' &&
        parameter.schema.additionalProperties?.type === 'string',
    )
    .map((parameter) => parameter.name as string);
}

/** `name[key]=value` pairs of the raw query as one object; a nested or repeated key is a 400 naming it. */
function mapOf(name: string, pairs: string[]): Record<string, string> {
  const map: Record<string, string> = Object.create(null);
  for (const pair of pairs) {
    const separator = pair.indexOf('=');
    const field = formDecode(separator === -1 ? pair : pair.slice(0, separator));
    if (!field.startsWith(`${name}[`)) continue;
    const key = /^[^[\]]*\[([^[\]]*)\]$/.exec(field)?.[1];
    if (key === undefined) {
      throw new BadRequestError(`Query field "${field}" is not of the form ${name}[key]=value.`, 'VALIDATION_FAILED', [
        { path: `query.${name}`, message: `"${field}" is not of the form ${name}[key]` },
      ]);
    }
    if (Object.hasOwn(map, key)) {
      throw new BadRequestError(`Query field ${name}[${key}] is given more than once.`, 'VALIDATION_FAILED', [
        { path: `query.${name}[${key}]`, message: 'is given more than once' },
      ]);
    }
    map[key] = separator === -1 ? '' : formDecode(pair.slice(separator + 1));
  }
  return map;
}
