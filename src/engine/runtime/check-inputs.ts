import type { InputViolation } from '../errors/input-validation-error.js';
import type { VariableInfo, VariableType } from '../types.js';

/** Declared input names per plan, built once (this runs for every run, on the caller's thread). */
const knownNames = new WeakMap<VariableInfo[], Set<string>>();

/** Type checks of run inputs against the START declarations (validators run later, in the sandbox). */
export function checkInputs(declared: VariableInfo[], inputs: Record<string, unknown>): { state: Record<string, unknown>; violations: InputViolation[] } {
  const violations: InputViolation[] = [];
  const state: Record<string, unknown> = {};
  let known = knownNames.get(declared);
  if (!known) {
    known = new Set(declared.map((d) => d.name));
    knownNames.set(declared, known);
  }
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
    return { state, violations: [{ variable: '', message: 'inputs must be an object' }] };
  }
  for (const name of Object.keys(inputs)) {
    if (!known.has(name)) violations.push({ variable: name, message: 'is not an input of this scenario' });
  }
  for (const info of declared) {
    const value = inputs[info.name];
    if (value === undefined || value === null) {
      if (info.required) violations.push({ variable: info.name, message: 'is required' });
      state[info.name] = null;
      continue;
    }
    const problem = typeProblem(info.type, value);
    if (problem) violations.push({ variable: info.name, message: problem });
    state[info.name] = value;
  }
  return { state, violations };
}

function typeProblem(type: VariableType, value: unknown): string | null {
  switch (type.type) {
    case 'STRING': return typeof value === 'string' ? null : `must be a string, got ${describe(value)}`;
    case 'DOUBLE': return typeof value === 'number' && Number.isFinite(value) ? null : `must be a finite number, got ${describe(value)}`;
    case 'INTEGER': return Number.isInteger(value) ? null : `must be an integer, got ${describe(value)}`;
    case 'BOOLEAN': return typeof value === 'boolean' ? null : `must be a boolean, got ${describe(value)}`;
    case 'DICTIONARY':
      return typeof value === 'string' && type.options.includes(value) ? null : `must be one of ${type.options.join(', ')} (dictionary ${type.name}), got ${describe(value)}`;
    case 'MAP': return isPlainObject(value) ? null : `must be an object, got ${describe(value)}`;
    case 'VECTOR': return Array.isArray(value) ? null : `must be an array, got ${describe(value)}`;
  }
}

function isPlainObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  const text = JSON.stringify(value);
  return typeof value === 'object' ? 'an object' : `${typeof value} ${text && text.length > 40 ? text.slice(0, 40) + '…' : text}`;
}
