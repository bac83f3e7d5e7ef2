import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { NodeType } from '../types.js';

/** Validators built from the schemas in spec/openapi.json, so the spec and the engine cannot drift. */

const SPEC_ID = 'urn:scenario-scoring:openapi';

const SETTINGS_SCHEMA: Record<NodeType, string> = {
  START: 'StartNodeSettings',
  END: 'EndNodeSettings',
  SCRIPT: 'ScriptNodeSettings',
  DECISION: 'DecisionNodeSettings',
  DECISION_TABLE: 'DecisionTableNodeSettings',
  SCORECARD: 'ScorecardNodeSettings',
  DATA_LOOKUP: 'DataLookupNodeSettings',
  SCENARIO_CALL: 'ScenarioCallNodeSettings',
  HTTP_CALL: 'HttpCallNodeSettings',
  MODEL: 'ModelNodeSettings',
};

interface SchemaProblem {
  path: string;
  message: string;
}
export type SchemaCheck = (value: unknown, basePath: string) => SchemaProblem[];

let validators: { graph: SchemaCheck; settings: Record<NodeType, SchemaCheck> } | undefined;

export function specSchemas(): { graph: SchemaCheck; settings: Record<NodeType, SchemaCheck> } {
  if (!validators) validators = buildValidators();
  return validators;
}

function specLocation(): URL {
  return new URL('../../../spec/openapi.json', import.meta.url);
}

/**
 * Past this many JSON values a failing node reports only its first schema problem. Ajv's
 * every-problem mode copies its error list once per failing `$ref`'d element, so its work grows with
 * the square of the problems: a 1 MB scorecard of 125,000 broken characteristics held the event
 * loop for minutes. Documents a person writes stay far below this and still get every problem.
 */
export const FULL_REPORT_MAX_VALUES = 2_000;

function createAjv(spec: { components: { schemas: Record<string, unknown> } }, allErrors: boolean): Ajv2020 {
  const ajv = new Ajv2020({ allErrors, strict: false, discriminator: true });
  const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: SPEC_ID, components: { schemas: withoutDiscriminatorMappings(spec.components.schemas) } });
  return ajv;
}

/** Whether `value` holds at most `limit` JSON values (counting stops at the limit). */
function hasAtMostValues(value: unknown, limit: number): boolean {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    count += 1;
    if (count > limit) return false;
    if (next && typeof next === 'object') {
      for (const child of Array.isArray(next) ? next : Object.values(next)) {
        if (count + pending.length >= limit) return false;
        pending.push(child);
      }
    }
  }
  return true;
}

function buildValidators(): { graph: SchemaCheck; settings: Record<NodeType, SchemaCheck> } {
  const spec = JSON.parse(readFileSync(specLocation(), 'utf8')) as { components: { schemas: Record<string, unknown> } };
  // The first-problem validator decides (its work is linear); the every-problem one only explains failures of documents of a person's size.
  const firstProblem = createAjv(spec, false);
  const everyProblem = createAjv(spec, true);
  const check = (name: string): SchemaCheck => {
    const ref = `${SPEC_ID}#/components/schemas/${name}`;
    const validateFirst = firstProblem.getSchema(ref) as ValidateFunction | undefined;
    const validateEvery = everyProblem.getSchema(ref) as ValidateFunction | undefined;
    if (!validateFirst || !validateEvery) throw new Error(`Schema ${name} is missing from spec/openapi.json`);
    return (value, basePath) => {
      if (validateFirst(value)) return [];
      if (!hasAtMostValues(value, FULL_REPORT_MAX_VALUES)) return toProblems(validateFirst.errors ?? [], basePath);
      validateEvery(value);
      return toProblems(validateEvery.errors ?? [], basePath);
    };
  };
  const settings = Object.fromEntries(
    Object.entries(SETTINGS_SCHEMA).map(([type, name]) => [type, check(name)]),
  ) as Record<NodeType, SchemaCheck>;
  return { graph: check('ScenarioGraph'), settings };
}

function toProblems(errors: ErrorObject[], basePath: string): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  // oneOf branches that fail explain themselves more precisely than the oneOf summary
  const specific = errors.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'anyOf' && e.keyword !== 'if');
  for (const error of specific.length > 0 ? specific : errors) {
    let path = basePath + pointerToPath(error.instancePath);
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'additionalProperties') {
      path += `.${(error.params as { additionalProperty: string }).additionalProperty}`;
      message = 'is not an allowed property';
    } else if (error.keyword === 'required') {
      path += `.${(error.params as { missingProperty: string }).missingProperty}`;
      message = 'is required';
    } else if (error.keyword === 'enum') {
      message = `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    }
    const key = `${path}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push({ path, message });
  }
  return problems;
}

/** `/bins/2/min` → `.bins[2].min` */
function pointerToPath(pointer: string): string {
  if (!pointer) return '';
  return pointer
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) =>
      /^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`,
    )
    .join('');
}

/** Ajv reads the discriminator from the branches' `const`; the OpenAPI `mapping` (for generators) it does not support. */
function withoutDiscriminatorMappings<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) && typeof v.propertyName === 'string' && v.mapping
      ? { propertyName: v.propertyName }
      : v,
  ) as T;
}
