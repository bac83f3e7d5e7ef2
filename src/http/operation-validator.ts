import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * The spec as Ajv reads it (every schema added once under an id of its own), and the checks of responses
 * (VALIDATE_RESPONSES): every operation's, on both lanes (src/http/response-check.ts on Express). The checks
 * of requests are compiled on the same footing in src/http/request-check.ts.
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
export function createAjv(spec: OpenApiDocument, options: { allErrors: boolean; useDefaults: boolean }): Ajv2020 {
  // strictNumbers: NaN and ±Infinity are no numbers (a body's JSON cannot hold them; a coerced parameter could).
  const ajv = new Ajv2020({ ...options, strict: false, strictNumbers: true, coerceTypes: false, inlineRefs: false });
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
  // Every problem of a response (the server's own, and small), and no defaults written into what goes out.
  const ajv = createAjv(spec, { allErrors: true, useDefaults: false });
  const checks = new Map<string, ResponseCheck>();
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item))
      if (operation?.operationId)
        checks.set(operation.operationId, compileResponseCheck(spec, operation.operationId, ajv));
  }
  return checks;
}

/** Compiles a check of responses (VALIDATE_RESPONSES) of `operationId` against the spec; it returns what is wrong, or undefined. */
function compileResponseCheck(spec: OpenApiDocument, operationId: string, ajv: Ajv2020): ResponseCheck {
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
