/**
 * Renders generated/operations.ts: for every operation, what its handler is given (path, query and
 * header parameters, body) and what it may answer (each success status with its media type, body and
 * declared response headers), as types that point into generated/api-types.ts. Handlers are typed
 * from these (src/http/operation-handler.ts), so a schema change that a handler no longer satisfies
 * fails `tsc` in that handler.
 */
import { isFileSchema } from '../../src/http/operation-shape.js';
import { replyEncoding } from '../../src/http/reply-encodings.js';
import {
  operationsOf,
  resolve,
  type Schema,
  type Spec,
  type SpecHeader,
  type SpecOperation,
  type SpecMediaType,
  type SpecParameter,
  type SpecResponse,
} from './spec-document.js';

/** Response headers every response carries, set by the service itself (src/http/request-context.ts, the fast lane), not by handlers. */
const SET_ON_EVERY_RESPONSE = new Set(['x-request-id']);

const NOTHING = 'Record<string, never>';

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function objectType(fields: Array<{ name: string; required: boolean; type: string }>): string {
  if (fields.length === 0) return NOTHING;
  return `{ ${fields.map((field) => `${quote(field.name)}${field.required ? '' : '?'}: ${field.type}`).join('; ')} }`;
}

function parametersIn(spec: Spec, operation: SpecOperation, location: SpecParameter['in']): SpecParameter[] {
  return (operation.parameters ?? [])
    .map((parameter) => resolve<SpecParameter>(spec, parameter))
    .filter((parameter) => parameter.in === location);
}

function parametersType(spec: Spec, operation: SpecOperation, location: 'path' | 'query'): string {
  if (parametersIn(spec, operation, location).length === 0) return NOTHING;
  return `NonNullable<operations[${quote(operation.operationId)}]['parameters'][${quote(location)}]>`;
}

/** Header parameters by lower-case name (how Node hands them over), each typed as the spec's schema says. */
function headersType(spec: Spec, operation: SpecOperation): string {
  const source = `NonNullable<operations[${quote(operation.operationId)}]['parameters']['header']>`;
  return objectType(
    parametersIn(spec, operation, 'header').map((parameter) => ({
      name: parameter.name.toLowerCase(),
      required: parameter.required === true,
      type: `${source}[${quote(parameter.name)}]`,
    })),
  );
}

function requestBodyOf(spec: Spec, operation: SpecOperation) {
  return operation.requestBody === undefined ? undefined : resolve(spec, operation.requestBody);
}

function bodyType(spec: Spec, operation: SpecOperation): string {
  const body = requestBodyOf(spec, operation);
  if (!body) return 'undefined';
  const source = `NonNullable<operations[${quote(operation.operationId)}]['requestBody']>['content']`;
  const types = Object.keys(body.content).map((mediaType) => `${source}[${quote(mediaType)}]`);
  return [...types, ...(body.required ? [] : ['undefined'])].join(' | ');
}

/** Properties of a multipart body that are files (as src/http/operation-shape.ts finds them at run time). */
function uploadsType(spec: Spec, operation: SpecOperation): string {
  const schema = requestBodyOf(spec, operation)?.content['multipart/form-data']?.schema;
  const properties = schema ? (resolve<Schema>(spec, schema).properties ?? {}) : {};
  const files = Object.entries(properties)
    .filter(([, property]) => isFileSchema(resolve<Schema>(spec, property)))
    .map(([name]) => quote(name));
  return files.length > 0 ? files.join(' | ') : 'never';
}

function replyHeadersType(spec: Spec, operationId: string, status: string, response: SpecResponse): string {
  const fields = Object.entries(response.headers ?? {})
    .filter(([name]) => !SET_ON_EVERY_RESPONSE.has(name.toLowerCase()))
    .map(([name, header]) => ({
      name,
      required: resolve<SpecHeader>(spec, header).required === true,
      type: `operations[${quote(operationId)}]['responses'][${status}]['headers'][${quote(name)}]`,
    }));
  return fields.length === 0
    ? ''
    : `; headers${fields.some((field) => field.required) ? '' : '?'}: ${objectType(fields)}`;
}

/** The type of a component schema, or of an array of one: what `x-parsed-schema` may say. */
function parsedType(operationId: string, schema: SpecMediaType['x-parsed-schema']): string | undefined {
  if (!schema) return undefined;
  const named = (ref: string | undefined) => {
    const name = ref?.match(/^#\/components\/schemas\/([^/]+)$/)?.[1];
    if (!name)
      throw new Error(`${operationId}: x-parsed-schema must be a $ref to a component schema, or an array of one`);
    return `components['schemas'][${quote(name)}]`;
  };
  return schema.type === 'array' ? `Array<${named(schema.items?.$ref)}>` : named(schema.$ref);
}

function replyBodyType(operationId: string, status: string, mediaType: string, declared: SpecMediaType): string {
  const value =
    parsedType(operationId, declared['x-parsed-schema']) ??
    `operations[${quote(operationId)}]['responses'][${status}]['content'][${quote(mediaType)}]`;
  switch (replyEncoding(mediaType)) {
    case 'json':
    case 'yaml':
      return value;
    case 'ndjson':
      return `AsyncIterable<ReadonlyArray<${value}>>`;
    case 'text':
      return `${value} | AsyncIterable<${value}>`;
    case 'binary':
      return 'Uint8Array';
    case undefined:
      throw new Error(
        `${operationId} answers ${status} as ${mediaType}, which src/http/reply-encodings.ts does not know how to send: add it there and to src/http/send-reply.ts`,
      );
  }
}

/** One member of the reply union per success status and media type; JSON is the default media type. */
function repliesType(spec: Spec, operation: SpecOperation): string {
  const { operationId } = operation;
  const replies = Object.entries(operation.responses)
    .filter(([status]) => /^2\d\d$/.test(status))
    .flatMap(([status, declared]) => {
      const response = resolve<SpecResponse>(spec, declared);
      const headers = replyHeadersType(spec, operationId, status, response);
      const mediaTypes = Object.keys(response.content ?? {});
      if (mediaTypes.length === 0) return [`{ status: ${status}${headers} }`];
      return mediaTypes.map((mediaType) => {
        const contentType =
          mediaType === 'application/json' ? `contentType?: ${quote(mediaType)}` : `contentType: ${quote(mediaType)}`;
        return `{ status: ${status}; ${contentType}; body: ${replyBodyType(operationId, status, mediaType, response.content?.[mediaType] ?? {})}${headers} }`;
      });
    });
  if (replies.length === 0) throw new Error(`${operationId} declares no success response (2xx)`);
  return replies.map((reply) => `\n      | ${reply}`).join('');
}

export function renderOperationContracts(spec: Spec, header: string): string {
  const entries = operationsOf(spec).map(
    ({ operation }) => `  ${operation.operationId}: {
    params: ${parametersType(spec, operation, 'path')};
    query: ${parametersType(spec, operation, 'query')};
    headers: ${headersType(spec, operation)};
    body: ${bodyType(spec, operation)};
    uploads: ${uploadsType(spec, operation)};
    replies:${repliesType(spec, operation)};
  };`,
  );
  return `${header}import type { components, operations } from './api-types.js';

/**
 * What each operation's handler is given and may answer, from the spec:
 * - \`params\`, \`query\`: path and query parameters, validated (and coerced) by the spec;
 * - \`headers\`: the header parameters it declares, by lower-case name;
 * - \`body\`: the request body of any media type it declares (\`undefined\` when it takes none or it is optional);
 * - \`uploads\`: the multipart body's file fields (\`never\` when there are none);
 * - \`replies\`: one member per success status and media type (\`contentType\` may be left out for JSON),
 *   with the response headers the spec declares there (\`X-Request-Id\` is set for every response by the service).
 * Error statuses are not replies: handlers throw AppErrors (src/errors/), answered with the \`Error\` schema.
 */
export interface OperationContracts {
${entries.join('\n')}
}
`;
}
