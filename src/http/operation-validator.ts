import type { RequestHandler, Response } from 'express';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { BadRequestError } from '../errors/bad-request-error.js';
import type { ErrorDetail } from '../errors/app-error.js';

/**
 * Request and response validation of ONE operation, compiled once from spec/openapi.json with Ajv.
 * Used for the hot path (scoreScenario), where express-openapi-validator's per-request route lookup
 * and parameter mutation halved throughput; every other operation goes through
 * express-openapi-validator. Same spec, same error shape (400 VALIDATION_FAILED naming each field).
 * Supports what such an operation declares: query parameters with schemas and a JSON body.
 */

const SPEC_ID = 'urn:scenario-scoring:openapi-operation';

interface SpecParameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema?: unknown;
}

interface SpecOperation {
  operationId: string;
  parameters?: Array<SpecParameter | { $ref: string }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> } | { $ref: string }>;
  security?: Array<Record<string, string[]>>;
}

interface Spec {
  paths: Record<string, Record<string, SpecOperation>>;
  components: { schemas: Record<string, unknown>; parameters?: Record<string, SpecParameter>; responses?: Record<string, { content?: Record<string, { schema: unknown }> }>; securitySchemes?: Record<string, { in?: string; name?: string }> };
}

function findOperation(spec: Spec, operationId: string): SpecOperation {
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) if (operation.operationId === operationId) return operation;
  }
  throw new Error(`Operation ${operationId} is not in the spec`);
}

function resolve<T>(spec: Spec, value: T | { $ref: string }): T {
  if (value && typeof value === 'object' && '$ref' in value) {
    const path = value.$ref.replace(/^#\//, '').split('/');
    return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], spec) as T;
  }
  return value as T;
}

function createAjv(spec: Spec): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: false });
  const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: SPEC_ID, components: { schemas: spec.components.schemas } });
  return ajv;
}

/** `#/components/schemas/X` inside operation schemas must point into the registered document. */
function anchored(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema ?? {}).replace(/"#\/components\//g, `"${SPEC_ID}#/components/`));
}

function details(errors: ErrorObject[] | null | undefined, location: string): ErrorDetail[] {
  return (errors ?? []).map((error) => {
    let path = location + error.instancePath.replace(/\//g, '.');
    if (error.keyword === 'required') path += `.${(error.params as { missingProperty: string }).missingProperty}`;
    if (error.keyword === 'additionalProperties') path += `.${(error.params as { additionalProperty: string }).additionalProperty}`;
    const message = error.keyword === 'additionalProperties' ? 'is not an allowed parameter' : (error.message ?? 'is invalid');
    return { path, message };
  });
}

function fail(problems: ErrorDetail[]): BadRequestError {
  return new BadRequestError(problems.map((problem) => `${problem.path} ${problem.message}`).join('; '), 'VALIDATION_FAILED', problems);
}

/** Validates the query string and JSON body of requests to `operationId`; 400 with every problem otherwise. */
export function validateOperationRequest(spec: Spec, operationId: string): RequestHandler {
  const operation = findOperation(spec, operationId);
  const ajv = createAjv(spec);
  const parameters = (operation.parameters ?? []).map((parameter) => resolve<SpecParameter>(spec, parameter));
  if (parameters.some((parameter) => parameter.in !== 'query')) throw new Error(`${operationId}: only query parameters are supported here`);
  // API-key schemes sent as query parameters (the score token's `key`) are allowed too.
  const securityQuery = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement))
    .map((name) => spec.components.securitySchemes?.[name])
    .filter((scheme): scheme is { in: string; name: string } => scheme?.in === 'query' && typeof scheme.name === 'string')
    .map((scheme) => scheme.name);
  const querySchema = {
    type: 'object',
    properties: Object.fromEntries([...parameters.map((parameter) => [parameter.name, anchored(parameter.schema)]), ...securityQuery.map((name) => [name, { type: 'string' }])]),
    required: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
    additionalProperties: false,
  };
  const validateQuery = ajv.compile(querySchema);
  const jsonBody = operation.requestBody?.content['application/json'];
  const validateBody: ValidateFunction | undefined = jsonBody ? ajv.compile(anchored(jsonBody.schema) as object) : undefined;
  const bodyRequired = operation.requestBody?.required === true;

  return (request, _response, next) => {
    const problems: ErrorDetail[] = [];
    if (!validateQuery(request.query)) problems.push(...details(validateQuery.errors, 'query'));
    if (validateBody) {
      const hasBody = request.body !== undefined && request.headers['content-length'] !== '0';
      if (!request.is('application/json') && (hasBody || bodyRequired)) {
        problems.push({ path: 'body', message: 'must be sent as application/json' });
      } else if (hasBody && !validateBody(request.body)) {
        problems.push(...details(validateBody.errors, 'body'));
      }
    }
    next(problems.length > 0 ? fail(problems) : undefined);
  };
}

/**
 * Tests only: checks every JSON response of `operationId` against the spec's schema for its status;
 * a response that breaks the contract becomes a 500 (as express-openapi-validator does elsewhere).
 */
export function validateOperationResponses(spec: Spec, operationId: string): RequestHandler {
  const operation = findOperation(spec, operationId);
  const ajv = createAjv(spec);
  const byStatus = new Map<string, ValidateFunction>();
  for (const [status, declared] of Object.entries(operation.responses)) {
    const schema = resolve(spec, declared).content?.['application/json']?.schema;
    if (schema) byStatus.set(status, ajv.compile(anchored(schema) as object));
  }
  return (_request, response, next) => {
    const send = response.json.bind(response);
    response.json = ((body: unknown) => {
      const validate = byStatus.get(String(response.statusCode));
      if (!validate) {
        const undeclared = response.statusCode;
        response.status(500);
        return send({ status: 500, code: 'INTERNAL_ERROR', message: `Response status ${undeclared} is not declared for ${operationId}.` });
      }
      if (!validate(body)) {
        response.status(500);
        return send({ status: 500, code: 'INTERNAL_ERROR', message: `The response breaks the contract: ${ajv.errorsText(validate.errors)}` });
      }
      return send(body);
    }) as Response['json'];
    next();
  };
}
