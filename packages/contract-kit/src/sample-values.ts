import { randomUUID } from 'node:crypto';
import type { JsonObject, OperationInfo, ServedSpec } from './served-spec.js';

/**
 * Values the kit puts into requests, derived from the served schemas so that they follow the spec
 * (an id that becomes a string, a field that is renamed).
 */

function typesOf(schema: JsonObject | undefined): string[] {
  const type = schema?.type;
  return Array.isArray(type) ? type.map(String) : type === undefined ? [] : [String(type)];
}

/** A path value for probes that never reach a handler (401 first): any well-formed value will do. */
function probeValue(spec: ServedSpec, schema: JsonObject | undefined): string {
  const resolved = schema && typeof schema.$ref === 'string' ? spec.resolve(schema, '').value : schema;
  if (resolved?.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  if (typesOf(resolved).some((type) => type === 'integer' || type === 'number')) return '1';
  return 'contract-probe';
}

/** Path values for every path parameter of an operation. */
export function probePath(spec: ServedSpec, operation: OperationInfo): Record<string, string> {
  return Object.fromEntries(
    operation.parameters
      .filter((parameter) => parameter.in === 'path')
      .map((parameter) => [parameter.name, probeValue(spec, parameter.schema)]),
  );
}

/** An id that names nothing: the largest integer the schema allows, or a long digit string. */
export function missingId(spec: ServedSpec, operation: OperationInfo, name: string): string {
  const parameter = operation.parameters.find((candidate) => candidate.in === 'path' && candidate.name === name);
  const schema =
    parameter?.schema && typeof parameter.schema.$ref === 'string'
      ? spec.resolve(parameter.schema, '').value
      : parameter?.schema;
  if (typesOf(schema).includes('integer'))
    return String(typeof schema?.maximum === 'number' ? schema.maximum : 2 ** 31 - 1);
  return '999999999999';
}

/** A name no one has: `contract-missing-<uuid>` trimmed to what a name pattern usually allows. */
export function missingName(): string {
  return `contract-missing-${randomUUID().slice(0, 18)}`;
}

/** A schema and, after `$ref`s, every branch of its `allOf` / `oneOf` / `anyOf`, flattened. */
function alternatives(spec: ServedSpec, schema: JsonObject | undefined, depth = 0): JsonObject[] {
  if (!schema || depth > 10) return [];
  const resolved = typeof schema.$ref === 'string' ? spec.resolve(schema, '').value : schema;
  const branches = ['allOf', 'oneOf', 'anyOf'].flatMap((keyword) => (resolved[keyword] ?? []) as JsonObject[]);
  return [resolved, ...branches.flatMap((branch) => alternatives(spec, branch, depth + 1))];
}

/**
 * The property of the object schema at `pointer` (through `$ref`s, `items` and composition) named by
 * one of `candidates`, first match wins; the first candidate when the schema names none of them.
 */
export function propertyName(spec: ServedSpec, pointer: string, path: string[], candidates: string[]): string {
  let schemas = alternatives(spec, spec.at(pointer) as JsonObject | undefined);
  for (const step of path) {
    schemas = schemas.flatMap((schema) => {
      const next = step === '[]' ? schema.items : ((schema.properties ?? {}) as JsonObject)[step];
      return next && typeof next === 'object' ? alternatives(spec, next as JsonObject) : [];
    });
  }
  const named = new Set(schemas.flatMap((schema) => Object.keys((schema.properties ?? {}) as JsonObject)));
  return candidates.find((candidate) => named.has(candidate)) ?? candidates[0];
}

/** JSON pointer of an operation's request body schema for a media type. */
export function requestSchemaPointer(operation: OperationInfo, mediaType: string): string {
  const token = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');
  return `/paths/${token(operation.path)}/${operation.method}/requestBody/content/${token(mediaType)}/schema`;
}
