import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { ErrorDetail } from '../errors/app-error.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { UnsupportedMediaTypeError } from '../errors/unsupported-media-type-error.js';
import { explainValidatorErrors, type ValidatorErrorItem } from '../errors/validator-error-details.js';
import { mediaTypeOf } from './body-presence.js';
import {
  anchored,
  createSpecAjv,
  declaredHeaders,
  resolve,
  type OpenApiDocument,
  type SpecParameter,
} from './operation-validator.js';

/**
 * The request checks of every operation, compiled once from the spec at start-up on one Ajv, and run by both lanes
 * (the Express lane's validateRequest, the fast lane): what a request's media type, parameters and body must be.
 *
 * - Parameters arrive as text. Integers, numbers and booleans are coerced before the schema sees them, as Ajv's own
 *   coercion reads them (`" 5"` is 5, `"true"` is true); a number past ±1.8e308 (`Infinity`, `1e400`, 400 digits)
 *   is refused as not finite, as no schema bound could be checked on it.
 * - Defaults are written into what is missing (`limit`, the callback retry headers): handlers trust them.
 * - The first problem of the parameters and the first of the body (Ajv's every-problem mode costs the square of the
 *   problems: docs/architecture.md, "Validation stays cheap"), with paths naming the field (`query.limit`,
 *   `headers.x-sce-callbackretrycount`, `body.inputs.age`). A query parameter the operation does not declare is
 *   refused by name; the score token's `key` is declared by its security scheme.
 * - A body's media type is one the operation declares (or a `+json` type where it takes JSON), else 415. No body
 *   bytes is no body, whatever the Content-Type (body-presence.ts): never a 415 then, and a 400 naming `body`
 *   where the body is required.
 */

/** One operation's checks, in the order both lanes run them: the media type before the body is read, the rest after. */
export interface RequestCheck {
  operationId: string;
  /** The header parameters it declares, by lower-case name: what the check and the handler are given. */
  headerNames: readonly string[];
  /** It declares a request body (one sent to any other operation is ignored, whatever its type or size). */
  takesBody: boolean;
  /** 415 for body bytes of a media type it does not take; `hasBody`: the request carries body bytes. */
  checkMediaType(method: string, pathname: string, contentType: string | undefined, hasBody: boolean): void;
  /**
   * Coerces the parameters in place (and writes defaults into them and the body), then 400 VALIDATION_FAILED naming
   * the first problem of the parameters and the first of the body, if any. `body` is undefined when none was sent.
   */
  check(
    query: Record<string, unknown>,
    params: Record<string, unknown>,
    headers: Record<string, unknown>,
    body: unknown,
    contentType: string | undefined,
  ): void;
}

type Location = 'query' | 'params' | 'headers';
type Coercion = 'number' | 'boolean';

interface CoercedParameter {
  name: string;
  as: Coercion;
}

interface LocationCheck {
  location: Location;
  coerced: CoercedParameter[];
  validate: ValidateFunction;
}

/** Every operation's request check, by operationId: what the app builds before it listens. */
export function compileRequestChecks(spec: OpenApiDocument): Map<string, RequestCheck> {
  // One Ajv for the bodies, path and header parameters of every operation: the first problem only; defaults written
  // in; no coercion of its own (top-level parameters are coerced here, bodies never are). Query parameters get the
  // same Ajv with coercion on as well: a deepObject parameter (`context[actors][requester][attempts]=2`) arrives as
  // nested text, and its leaves are coerced to the types its schema gives, as the spec's style says they are sent.
  const ajv = createSpecAjv(spec, { allErrors: false, useDefaults: true, strictNumbers: true });
  const queryAjv = createSpecAjv(spec, { allErrors: false, useDefaults: true, strictNumbers: true, coerceTypes: true });
  const checks = new Map<string, RequestCheck>();
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation?.operationId) continue;
      checks.set(
        operation.operationId,
        compileRequestCheck(spec, { ajv, queryAjv }, `${method.toUpperCase()} ${path}`, operation),
      );
    }
  }
  return checks;
}

function compileRequestCheck(
  spec: OpenApiDocument,
  { ajv, queryAjv }: { ajv: ReturnType<typeof createSpecAjv>; queryAjv: ReturnType<typeof createSpecAjv> },
  where: string,
  operation: OpenApiDocument['paths'][string][string],
): RequestCheck {
  const parameters = (operation.parameters ?? []).map((parameter) => resolve<SpecParameter>(spec, parameter));
  if (parameters.some((parameter) => parameter.in === 'cookie'))
    throw new Error(`${where}: cookie parameters are not supported`);
  // API-key schemes sent as query parameters (the score token's `key`) are declared by the operation's security.
  const securityQuery = (operation.security ?? [])
    .flatMap((requirement) => Object.keys(requirement))
    .map((name) => spec.components.securitySchemes?.[name])
    .filter((scheme) => scheme?.in === 'query' && typeof scheme.name === 'string')
    .map((scheme) => ({ name: scheme?.name as string, in: 'query' as const, schema: { type: 'string' } }));
  const [queryCheck, paramsCheck, headersCheck] = [
    locationCheck(spec, queryAjv, 'query', [
      ...parameters.filter((parameter) => parameter.in === 'query'),
      ...securityQuery,
    ]),
    locationCheck(
      spec,
      ajv,
      'params',
      parameters.filter((parameter) => parameter.in === 'path'),
    ),
    locationCheck(
      spec,
      ajv,
      'headers',
      parameters
        .filter((parameter) => parameter.in === 'header')
        .map((parameter) => ({ ...parameter, name: parameter.name.toLowerCase() })),
    ),
  ];
  const content = operation.requestBody?.content ?? {};
  const bodyMediaTypes = Object.keys(content);
  const bodyValidators = new Map<string, ValidateFunction>(
    bodyMediaTypes.map((mediaType) => [mediaType, ajv.compile(anchored(content[mediaType].schema) as object)]),
  );
  const takesJson = bodyValidators.has('application/json');
  const firstBodyValidator = bodyValidators.values().next().value as ValidateFunction;
  const requiresBody = operation.requestBody?.required === true;
  const missingBody: ErrorDetail = { path: 'body', message: `is required (${bodyMediaTypes.join(', ')})` };
  const headerNames = declaredHeaders(spec, operation.operationId);
  const validatorOf = (mediaType: string | undefined): ValidateFunction | undefined =>
    (mediaType && bodyValidators.get(mediaType)) ||
    (takesJson && mediaType?.endsWith('+json') ? bodyValidators.get('application/json') : undefined);

  return {
    operationId: operation.operationId,
    headerNames,
    takesBody: bodyMediaTypes.length > 0,
    checkMediaType(method, pathname, contentType, hasBody) {
      if (!hasBody || bodyMediaTypes.length === 0) return;
      if (validatorOf(mediaTypeOf(contentType)) !== undefined) return;
      throw new UnsupportedMediaTypeError(
        `${method} ${pathname} takes ${bodyMediaTypes.join(', ')}; the request's Content-Type is ${contentType ? `"${contentType}"` : 'missing'}.`,
      );
    },
    check(query, params, headers, body, contentType) {
      const problems: ErrorDetail[] = [];
      const problem =
        parameterProblem(queryCheck, query) ??
        parameterProblem(paramsCheck, params) ??
        parameterProblem(headersCheck, headers);
      if (problem) problems.push(problem);
      if (bodyMediaTypes.length > 0) {
        if (body === undefined) {
          if (requiresBody) problems.push(missingBody);
        } else {
          // checkMediaType let only a media type through that has a validator.
          const validate = validatorOf(mediaTypeOf(contentType)) ?? firstBodyValidator;
          if (!validate(body)) problems.push(...detailsOf(validate.errors, 'body'));
        }
      }
      if (problems.length > 0)
        throw new BadRequestError(
          problems.map((problem) => `${problem.path} ${problem.message}`).join('; '),
          'VALIDATION_FAILED',
          problems,
        );
    },
  };
}

function locationCheck(
  spec: OpenApiDocument,
  ajv: ReturnType<typeof createSpecAjv>,
  location: Location,
  parameters: SpecParameter[],
): LocationCheck {
  const coerced: CoercedParameter[] = [];
  for (const parameter of parameters) {
    // A parameter's schema may be a `$ref` to one of the spec's schemas: its type decides the coercion.
    const as = coercionOf(resolve<{ type?: string | string[] }>(spec, (parameter.schema ?? {}) as { $ref: string }));
    if (as) coerced.push({ name: parameter.name, as });
  }
  const schema = {
    type: 'object',
    properties: Object.fromEntries(parameters.map((parameter) => [parameter.name, anchored(parameter.schema)])),
    required: parameters
      .filter((parameter) => parameter.required || location === 'params')
      .map((parameter) => parameter.name),
    // Unknown query parameters are refused (a misspelt `limt` is not silently the default); other headers and
    // path segments are not parameters of the operation.
    additionalProperties: location !== 'query',
  };
  return { location, coerced, validate: ajv.compile(schema) };
}

function coercionOf(schema: { type?: string | string[] }): Coercion | undefined {
  const types = ([] as string[]).concat(schema.type ?? []);
  if (types.includes('integer') || types.includes('number')) return 'number';
  if (types.includes('boolean')) return 'boolean';
  return undefined;
}

/** Coerces one location's values in place, then its first problem, or undefined. */
function parameterProblem(check: LocationCheck, data: Record<string, unknown>): ErrorDetail | undefined {
  for (const { name, as } of check.coerced) {
    const value = data[name];
    if (typeof value !== 'string') continue;
    if (as === 'boolean') {
      if (value === 'true') data[name] = true;
      else if (value === 'false') data[name] = false;
      continue;
    }
    const number = Number(value);
    if (value === '' || Number.isNaN(number)) continue;
    if (!Number.isFinite(number)) return { path: `${check.location}.${name}`, message: 'must be a finite number' };
    data[name] = number;
  }
  if (check.validate(data)) return undefined;
  return detailsOf(check.validate.errors, check.location)[0];
}

/** Ajv's errors as details naming the field (`body.inputs.age`, `query.limit`), a failed oneOf explained once. */
function detailsOf(errors: ErrorObject[] | null | undefined, location: string): ErrorDetail[] {
  const items: ValidatorErrorItem[] = (errors ?? []).map((error) => {
    const params = error.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
    let path = `/${location}${error.instancePath}`;
    let message = error.message ?? 'is invalid';
    if (params.missingProperty !== undefined) path += `/${params.missingProperty}`;
    if (params.additionalProperty !== undefined) {
      path += `/${params.additionalProperty}`;
      if (location === 'query' && error.instancePath === '')
        message = `Unknown query parameter '${params.additionalProperty}'`;
    }
    if (error.keyword === 'enum' && Array.isArray(params.allowedValues))
      message = `${message}: ${params.allowedValues.join(', ')}`;
    return { path, message, errorCode: `${error.keyword}.openapi.validation` };
  });
  return explainValidatorErrors(items).map((item) => ({
    path: (item.path ?? `/${location}`).slice(1).replaceAll('/', '.'),
    message: item.message ?? 'is invalid',
  }));
}

/** The declared header parameters of a request, by lower-case name (those sent only): what is checked and handed on. */
export function declaredHeaderValues(check: RequestCheck, headers: IncomingHttpHeaders): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const name of check.headerNames) {
    const value = headers[name];
    if (typeof value === 'string') values[name] = value;
  }
  return values;
}
