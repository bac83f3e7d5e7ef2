import type { RequestHandler } from 'express';
import { BadRequestError } from '../errors/bad-request-error.js';

/**
 * Refuses ±Infinity wherever the spec declares a numeric path, query or header parameter.
 * express-openapi-validator (5.x, Ajv with `strictNumbers`) coerces `Infinity`, `1e400` or a
 * 400-digit id to ±Infinity and then skips every numeric check (`minimum`, `maximum`, `integer`),
 * so `GET /api/scenario/open/Infinity` reached SQL as `where id = Infinity` (a 500). Runs right
 * after the validator, on the values it coerced; test/http/finite-numbers.test.ts shows the gap.
 */

interface SpecParameter {
  name: string;
  in: string;
  schema?: { type?: string | string[] };
  $ref?: string;
}

type SpecDocument = {
  paths: Record<string, Record<string, { operationId?: string; parameters?: SpecParameter[] }>>;
  components?: { parameters?: Record<string, SpecParameter> };
};

interface NumericParameter {
  name: string;
  location: 'path' | 'query' | 'header';
}

function isNumeric(parameter: SpecParameter): boolean {
  const types = ([] as string[]).concat(parameter.schema?.type ?? []);
  return types.includes('integer') || types.includes('number');
}

/** operationId → its numeric path, query and header parameters. */
function numericParameters(spec: SpecDocument): Map<string, NumericParameter[]> {
  const byOperation = new Map<string, NumericParameter[]>();
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) {
      if (!operation.operationId) continue;
      const parameters = (operation.parameters ?? [])
        .map((parameter) =>
          parameter.$ref ? spec.components?.parameters?.[parameter.$ref.split('/').pop() as string] : parameter,
        )
        .filter((parameter): parameter is SpecParameter => Boolean(parameter) && isNumeric(parameter as SpecParameter))
        .filter((parameter) => parameter.in === 'path' || parameter.in === 'query' || parameter.in === 'header')
        .map((parameter) => ({ name: parameter.name, location: parameter.in as NumericParameter['location'] }));
      if (parameters.length > 0) byOperation.set(operation.operationId, parameters);
    }
  }
  return byOperation;
}

const isInfinite = (value: unknown): boolean => {
  if (Array.isArray(value)) return value.some(isInfinite);
  if (value === undefined || value === null || value === '') return false;
  return !Number.isFinite(Number(value));
};

export function refuseInfiniteNumbers(spec: SpecDocument): RequestHandler {
  const byOperation = numericParameters(spec);
  return (request, _response, next) => {
    const openapi = (
      request as { openapi?: { schema?: { operationId?: string }; pathParams?: Record<string, unknown> } }
    ).openapi;
    const parameters = byOperation.get(openapi?.schema?.operationId ?? '');
    if (!parameters) {
      next();
      return;
    }
    const problems = parameters.flatMap(({ name, location }) => {
      const value =
        location === 'path'
          ? openapi?.pathParams?.[name]
          : location === 'query'
            ? (request.query as Record<string, unknown>)[name]
            : request.headers[name.toLowerCase()];
      const where = location === 'path' ? 'params' : location === 'query' ? 'query' : 'headers';
      return isInfinite(value) ? [{ path: `${where}.${name}`, message: 'must be a finite number' }] : [];
    });
    if (problems.length > 0) {
      next(
        new BadRequestError(
          problems.map((problem) => `${problem.path} ${problem.message}`).join('; '),
          'VALIDATION_FAILED',
          problems,
        ),
      );
      return;
    }
    next();
  };
}
