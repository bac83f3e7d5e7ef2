import { isPiiTagged } from '../document/input-variables.js';
import type { InputViolation } from '../errors/input-validation-error.js';
import type { VariableInfo, VariableType } from '../types.js';

/** How one declared input is checked, worked out once per plan (this runs for every run, on the caller's thread). */
interface InputCheck {
  name: string;
  required: boolean;
  type: VariableType;
  /** Tagged pii: a wrong value is described by its type only, so that it is not echoed to logs, answers or decision records. */
  personal: boolean;
  /** A quick test that passes every valid value; a value it fails is described by typeProblem. */
  accepts: (value: unknown) => boolean;
}

interface InputChecks {
  checks: InputCheck[];
  names: Set<string>;
}

const checksByPlan = new WeakMap<VariableInfo[], InputChecks>();

function checksOf(declared: VariableInfo[]): InputChecks {
  let plan = checksByPlan.get(declared);
  if (!plan) {
    plan = {
      checks: declared.map((info) => ({
        name: info.name,
        required: info.required,
        type: info.type,
        personal: isPiiTagged(info),
        accepts: acceptor(info.type),
      })),
      names: new Set(declared.map((d) => d.name)),
    };
    checksByPlan.set(declared, plan);
  }
  return plan;
}

function acceptor(type: VariableType): (value: unknown) => boolean {
  switch (type.type) {
    case 'STRING':
      return (value) => typeof value === 'string';
    case 'DOUBLE':
      return (value) => typeof value === 'number' && Number.isFinite(value);
    case 'INTEGER':
      return (value) => Number.isInteger(value);
    case 'BOOLEAN':
      return (value) => typeof value === 'boolean';
    case 'DICTIONARY': {
      const options = new Set(type.options);
      return (value) => typeof value === 'string' && options.has(value);
    }
    case 'MAP':
      return isPlainObject;
    case 'VECTOR':
      return (value) => Array.isArray(value);
  }
}

/** Type checks of run inputs against the START declarations (validators run later, in the sandbox). */
export function checkInputs(
  declared: VariableInfo[],
  inputs: Record<string, unknown>,
): { state: Record<string, unknown>; violations: InputViolation[] } {
  const violations: InputViolation[] = [];
  const state: Record<string, unknown> = {};
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
    return { state, violations: [{ variable: '', message: 'inputs must be an object' }] };
  }
  const { checks, names } = checksOf(declared);
  for (const name in inputs) {
    if (Object.hasOwn(inputs, name) && !names.has(name))
      violations.push({ variable: name, message: 'is not an input of this scenario' });
  }
  for (const check of checks) {
    const value = inputs[check.name];
    if (value === undefined || value === null) {
      if (check.required) violations.push({ variable: check.name, message: 'is required' });
      state[check.name] = null;
      continue;
    }
    if (!check.accepts(value))
      violations.push({
        variable: check.name,
        message: typeProblem(check.type, value, check.personal) ?? 'has the wrong type',
      });
    state[check.name] = value;
  }
  return { state, violations };
}

function typeProblem(type: VariableType, value: unknown, personal: boolean): string | null {
  const describe = personal ? describeType : describeValue;
  switch (type.type) {
    case 'STRING':
      return typeof value === 'string' ? null : `must be a string, got ${describe(value)}`;
    case 'DOUBLE':
      return typeof value === 'number' && Number.isFinite(value)
        ? null
        : `must be a finite number, got ${describe(value)}`;
    case 'INTEGER':
      return Number.isInteger(value) ? null : `must be an integer, got ${describe(value)}`;
    case 'BOOLEAN':
      return typeof value === 'boolean' ? null : `must be a boolean, got ${describe(value)}`;
    case 'DICTIONARY':
      return typeof value === 'string' && type.options.includes(value)
        ? null
        : `must be one of ${type.options.join(', ')} (dictionary ${type.name}), got ${describe(value)}`;
    case 'MAP':
      return isPlainObject(value) ? null : `must be an object, got ${describe(value)}`;
    case 'VECTOR':
      return Array.isArray(value) ? null : `must be an array, got ${describe(value)}`;
  }
}

function isPlainObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The value's type and (up to 40 characters of) the value itself. */
function describeValue(value: unknown): string {
  if (Array.isArray(value) || value === null || typeof value === 'object') return describeType(value);
  const text = JSON.stringify(value);
  return `${typeof value} ${text && text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}

/** The value's type only (a pii input's value is not shown). */
function describeType(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value} (value not shown: the input is tagged pii)`;
}
