import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * The spec read for checks compiled once with Ajv: its schemas on one Ajv (createSpecAjv), the request checks'
 * building blocks (src/http/request-check.ts compiles those of both lanes), and the responses' checks
 * (VALIDATE_RESPONSES: every operation's, on both lanes; src/http/response-check.ts on Express).
 */

/** Each of the spec's schemas is its own Ajv schema under this prefix, so Ajv compiles it once per instance. */
const SCHEMA_ID = 'urn:scenario-scoring:schema:';

export interface SpecParameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema?: unknown;
}

export interface SpecOperation {
  operationId: string;
  parameters?: Array<SpecParameter | { $ref: string }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> } | { $ref: string }>;
  security?: Array<Record<string, string[]>>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, SpecOperation>>;
  components: {
    schemas: Record<string, unknown>;
    parameters?: Record<string, SpecParameter>;
    responses?: Record<string, { content?: Record<string, { schema: unknown }> }>;
    securitySchemes?: Record<string, { in?: string; name?: string }>;
  };
}

export function findOperation(spec: OpenApiDocument, operationId: string): SpecOperation {
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) if (operation.operationId === operationId) return operation;
  }
  throw new Error(`Operation ${operationId} is not in the spec`);
}

export function resolve<T>(spec: OpenApiDocument, value: T | { $ref: string }): T {
  if (value && typeof value === 'object' && '$ref' in value) {
    const path = value.$ref.replace(/^#\//, '').split('/');
    return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], spec) as T;
  }
  return value as T;
}

/**
 * An Ajv holding every schema of the spec. Each is added under an id of its own rather than as one
 * document: Ajv caches what a `$ref` compiles to per root schema, so refs into one big document were
 * compiled again for every operation (about 20–60 ms each); refs to added schemas compile once.
 */
function createAjv(spec: OpenApiDocument, coerceTypes = false): Ajv2020 {
  return createSpecAjv(spec, { allErrors: true, useDefaults: false, coerceTypes });
}

/**
 * An Ajv holding every schema of the spec (see createAjv) with the given options: the request checks of
 * src/http/request-check.ts use one with `useDefaults`, first problem only, and strictNumbers.
 */
export function createSpecAjv(
  spec: OpenApiDocument,
  options: { allErrors: boolean; useDefaults: boolean; coerceTypes?: boolean; strictNumbers?: boolean },
): Ajv2020 {
  const ajv = new Ajv2020({ coerceTypes: false, ...options, strict: false, inlineRefs: false });
  const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  for (const [name, schema] of Object.entries(spec.components.schemas)) {
    ajv.addSchema({ ...(anchored(schema) as object), $id: SCHEMA_ID + name });
  }
  return ajv;
}

/** `#/components/schemas/X` inside the spec's schemas points at the schema added as `X`. */
export function anchored(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema ?? {}).replace(/"#\/components\/schemas\//g, `"${SCHEMA_ID}`));
}

/** The header parameters `operationId` declares, by lower-case name: what both lanes hand to the check and to the handler. */
export function declaredHeaders(spec: OpenApiDocument, operationId: string): string[] {
  return (findOperation(spec, operationId).parameters ?? [])
    .map((parameter) => resolve<SpecParameter>(spec, parameter))
    .filter((parameter) => parameter.in === 'header')
    .map((parameter) => parameter.name.toLowerCase());
}

/** A response's status and JSON body checked against an operation's declared responses: what is wrong, or undefined. */
export type ResponseCheck = (status: number, body: unknown) => string | undefined;

/**
 * The response checks of every operation, compiled at once on one Ajv (the spec's schemas are compiled
 * once, not once per operation): what a process builds at start-up, so no first answer compiles on the event loop.
 */
export function compileResponseChecks(spec: OpenApiDocument): Map<string, ResponseCheck> {
  const ajv = createAjv(spec);
  const checks = new Map<string, ResponseCheck>();
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item))
      if (operation?.operationId)
        checks.set(operation.operationId, compileResponseCheck(spec, operation.operationId, ajv));
  }
  return checks;
}

/** Compiles a check of responses (VALIDATE_RESPONSES) of `operationId` against the spec; it returns what is wrong, or undefined. */
function compileResponseCheck(
  spec: OpenApiDocument,
  operationId: string,
  ajv: Ajv2020 = createAjv(spec),
): ResponseCheck {
  const operation = findOperation(spec, operationId);
  const byStatus = new Map<string, ValidateFunction>();
  for (const [status, declared] of Object.entries(operation.responses)) {
    const schema = resolve(spec, declared).content?.['application/json']?.schema;
    if (schema) byStatus.set(status, ajv.compile(anchored(schema) as object));
  }
  return (status, body) => {
    const validate = byStatus.get(String(status));
    if (!validate) return `response status ${status} is not declared for ${operationId}`;
    return validate(body) ? undefined : `the response breaks the contract: ${ajv.errorsText(validate.errors)}`;
  };
}
