import Papa from 'papaparse';
import type { VariableInfo, VariableType } from '../engine/index.js';
import type { ErrorDetail } from '../errors/app-error.js';

const HEADER = ['required', 'name', 'type', 'description', 'tags'];
const SIMPLE_TYPES = new Set(['STRING', 'DOUBLE', 'INTEGER', 'BOOLEAN', 'MAP', 'VECTOR']);
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_DESCRIPTION = 2000;
const MAX_TAG = 100;

export interface CsvVariablesResult {
  variables: Record<string, VariableInfo>;
  problems: ErrorDetail[];
}

/**
 * Reads variable declarations, one per line: `required;name;type;description;tags` (description
 * and tags optional). Each line is split with papaparse (so `"a;b"` quoting works) but lines are
 * taken one by one so every problem names its line number; a quoted field cannot span lines.
 * Blank lines are skipped; the first non-blank line may be the header.
 */
export function parseVariablesCsv(text: string): CsvVariablesResult {
  const variables: Record<string, VariableInfo> = {};
  const problems: ErrorDetail[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  let seenContent = false;
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    const fields = splitLine(raw).map((field) => field.trim());
    const first = !seenContent;
    seenContent = true;
    if (first && isHeader(fields)) return;
    const problem = (message: string, column?: string) => problems.push({ path: `line ${line}`, line, message: column ? `${column}: ${message}` : message });
    if (fields.length < 3) return problem(`expected at least 3 ';'-separated columns (required;name;type[;description[;tags]]), found ${fields.length}`);
    if (fields.length > 5) return problem(`expected at most 5 ';'-separated columns (required;name;type;description;tags), found ${fields.length}`);
    const [requiredText, name, typeText, description = '', tagsText = ''] = fields;
    const required = parseBoolean(requiredText);
    if (required === undefined) return problem(`must be true or false, got "${requiredText}"`, 'required');
    if (!VARIABLE_NAME.test(name)) return problem(`"${name}" is not a variable name (a letter or _, then letters, digits or _; at most 64 characters)`, 'name');
    const type = parseType(typeText, name);
    if (typeof type === 'string') return problem(type, 'type');
    if (description.length > MAX_DESCRIPTION) return problem(`is longer than ${MAX_DESCRIPTION} characters`, 'description');
    const tags = tagsText.split(',').map((tag) => tag.trim()).filter(Boolean);
    const longTag = tags.find((tag) => tag.length > MAX_TAG);
    if (longTag) return problem(`"${longTag.slice(0, 20)}…" is longer than ${MAX_TAG} characters`, 'tags');
    if (Object.hasOwn(variables, name)) return problem(`variable "${name}" is declared more than once`, 'name');
    const info: VariableInfo = { name, type, required };
    if (description) info.description = description;
    if (tags.length > 0) info.tags = tags;
    variables[name] = info;
  });
  return { variables, problems };
}

function splitLine(line: string): string[] {
  const parsed = Papa.parse<string[]>(line, { delimiter: ';', header: false, skipEmptyLines: false });
  return parsed.data[0] ?? [];
}

function isHeader(fields: string[]): boolean {
  return fields.length >= 3 && fields.length <= 5 && fields.every((field, k) => field.toLowerCase() === HEADER[k]);
}

function parseBoolean(text: string): boolean | undefined {
  const lower = text.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  return undefined;
}

/** A type, or a message saying what is wrong with it. */
function parseType(text: string, variable: string): VariableType | string {
  const upper = text.toUpperCase();
  if (SIMPLE_TYPES.has(upper)) return { type: upper } as VariableType;
  if (!text.includes('#')) {
    return `"${text}" is not a type: use STRING, DOUBLE, INTEGER, BOOLEAN, MAP, VECTOR or dictionary options separated by # (A#B#C)`;
  }
  const options = text.split('#').map((option) => option.trim());
  if (options.some((option) => option === '')) return `dictionary "${text}" has an empty option`;
  const duplicate = options.find((option, k) => options.indexOf(option) !== k);
  if (duplicate !== undefined) return `dictionary "${text}" lists option "${duplicate}" twice`;
  return { type: 'DICTIONARY', name: variable, options };
}
