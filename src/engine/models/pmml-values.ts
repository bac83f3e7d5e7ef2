import type { FieldValue, ModelDataType, OpType } from './model-document.js';
import type { XmlElement } from './xml-parser.js';

/** What the PMML readers (pmml-reader.ts, pmml-transformations.ts) share: errors naming the element, typed attribute values. */

export class ModelFileError extends Error {
  /** `invalid`: not XML or not PMML; `unsupported`: valid PMML using something this engine does not run. */
  constructor(
    readonly kind: 'invalid' | 'unsupported',
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = 'ModelFileError';
  }
}

export interface FieldInfo {
  name: string;
  dataType: ModelDataType;
  optype: OpType;
}

export interface Context {
  path: string;
  fields: Map<string, FieldInfo>;
}

export const invalid = (path: string, message: string): never => {
  throw new ModelFileError('invalid', `${path}: ${message}`, path);
};
export const unsupported = (path: string, message: string): never => {
  throw new ModelFileError('unsupported', `${path}: ${message}`, path);
};

export function kids(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((c) => c.name === name);
}
export function kid(element: XmlElement, name: string): XmlElement | undefined {
  return element.children.find((c) => c.name === name);
}

export function number(path: string, raw: string | undefined, attribute: string, fallback?: number): number {
  if (raw === undefined) {
    if (fallback === undefined) invalid(path, `attribute "${attribute}" is required`);
    return fallback!;
  }
  const trimmed = raw.trim();
  const value = /^(INF|Infinity)$/i.test(trimmed)
    ? Infinity
    : /^-(INF|Infinity)$/i.test(trimmed)
      ? -Infinity
      : Number(trimmed);
  if (trimmed === '' || Number.isNaN(value)) invalid(path, `attribute "${attribute}" must be a number, got "${raw}"`);
  return value;
}

export function oneOf<T extends string>(
  path: string,
  raw: string | undefined,
  attribute: string,
  allowed: readonly T[],
  fallback: T,
  refused: readonly string[] = [],
): T {
  const value = raw ?? fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  if (refused.includes(value))
    return unsupported(path, `${attribute}="${value}" is not supported (supported: ${allowed.join(', ')})`);
  return invalid(path, `${attribute} must be one of ${[...allowed, ...refused].join(', ')}, got "${value}"`);
}

/** A PMML value (always text) as the field's type. */
export function typed(path: string, dataType: ModelDataType, raw: string): FieldValue {
  if (dataType === 'string') return raw;
  if (dataType === 'boolean') {
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    return invalid(path, `"${raw}" is not a boolean`);
  }
  const value = Number(raw.trim());
  // no integer check: a split of an integer field may fall between two integers (age <= 36.5)
  if (raw.trim() === '' || Number.isNaN(value)) invalid(path, `"${raw}" is not a number`);
  return value;
}

export function fieldOf(
  ctx: Context,
  path: string,
  name: string | undefined,
): { name: string; dataType: ModelDataType } {
  if (name === undefined) invalid(path, 'attribute "field" is required');
  const field = ctx.fields.get(name!);
  if (!field) invalid(path, `field "${name}" is not in the DataDictionary (or the model's MiningSchema)`);
  return field!;
}
