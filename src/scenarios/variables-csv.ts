import { createReadStream } from 'node:fs';
import { setImmediate } from 'node:timers/promises';
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
  /** The first MAX_REPORTED_PROBLEMS problems, by line. */
  problems: ErrorDetail[];
  /** Every bad line, listed or not. */
  problemCount: number;
}

/** Problems listed in a 400 (the count says how many there were): a file of bad lines makes a bounded answer. */
const MAX_REPORTED_PROBLEMS = 100;
/**
 * Most variables one file declares. A scenario's inputs are far fewer; the bound keeps the answer small enough to
 * encode without holding the event loop (a 1 MiB file of 53,000 variables took 108 ms to encode, 183 ms with
 * response validation; 10,000 take about a fifth of that).
 */
const MAX_VARIABLES = 10_000;
/** Longest line read: room for a description (2,000 characters) and many tags; a longer line is one problem, skipped. */
const MAX_LINE_CHARS = 20_000;
/** Text handed to the reader at a time; the event loop gets a turn after each. */
const CHUNK_CHARS = 64 << 10;
const LINE_BREAK = /\r\n|\n|\r/g;

/**
 * Reads variable declarations, one per line: `required;name;type;description;tags` (description
 * and tags optional). Each line is split on `;` (with papaparse when it holds a quote, so `"a;b"`
 * quoting works) but lines are taken one by one so every problem names its line number; a quoted
 * field cannot span lines. Blank lines are skipped; the first non-blank line may be the header.
 */
class VariablesCsvReader {
  private readonly variables: Record<string, VariableInfo> = {};
  private readonly problems: ErrorDetail[] = [];
  private problemCount = 0;
  private seenContent = false;
  private variableCount = 0;

  line(raw: string, line: number): void {
    if (raw.trim() === '') return;
    const fields = splitLine(raw).map((field) => field.trim());
    const first = !this.seenContent;
    this.seenContent = true;
    if (first && isHeader(fields)) return;
    const problem = (message: string, column?: string) =>
      this.problem(line, column ? `${column}: ${message}` : message);
    if (fields.length < 3) {
      problem(
        `expected at least 3 ';'-separated columns (required;name;type[;description[;tags]]), found ${fields.length}`,
      );
      return;
    }
    if (fields.length > 5) {
      problem(`expected at most 5 ';'-separated columns (required;name;type;description;tags), found ${fields.length}`);
      return;
    }
    const [requiredText, name, typeText, description = '', tagsText = ''] = fields;
    const required = parseBoolean(requiredText);
    if (required === undefined) {
      problem(`must be true or false, got "${requiredText.slice(0, 100)}"`, 'required');
      return;
    }
    if (!VARIABLE_NAME.test(name)) {
      problem(
        `"${name.slice(0, 100)}" is not a variable name (a letter or _, then letters, digits or _; at most 64 characters)`,
        'name',
      );
      return;
    }
    const type = parseType(typeText, name);
    if (typeof type === 'string') {
      problem(type, 'type');
      return;
    }
    if (description.length > MAX_DESCRIPTION) {
      problem(`is longer than ${MAX_DESCRIPTION} characters`, 'description');
      return;
    }
    const tags = tagsText
      .split(',')
      .map((tag) => tag.trim())
      .filter(Boolean);
    const longTag = tags.find((tag) => tag.length > MAX_TAG);
    if (longTag) {
      problem(`"${longTag.slice(0, 20)}…" is longer than ${MAX_TAG} characters`, 'tags');
      return;
    }
    if (Object.hasOwn(this.variables, name)) {
      problem(`variable "${name}" is declared more than once`, 'name');
      return;
    }
    this.variableCount += 1;
    // One problem at the first variable over the bound; the ones after it are neither kept nor reported.
    if (this.variableCount === MAX_VARIABLES + 1) {
      problem(`more than ${MAX_VARIABLES} variables: a file declares at most ${MAX_VARIABLES}`);
      return;
    }
    if (this.variableCount > MAX_VARIABLES) return;
    const info: VariableInfo = { name, type, required };
    if (description) info.description = description;
    if (tags.length > 0) info.tags = tags;
    this.variables[name] = info;
  }

  tooLong(line: number): void {
    this.seenContent = true;
    this.problem(line, `is longer than ${MAX_LINE_CHARS} characters`);
  }

  result(): CsvVariablesResult {
    return { variables: this.variables, problems: this.problems, problemCount: this.problemCount };
  }

  private problem(line: number, message: string): void {
    this.problemCount += 1;
    if (this.problems.length < MAX_REPORTED_PROBLEMS) this.problems.push({ path: `line ${line}`, line, message });
  }
}

/** The declarations of `text` (see VariablesCsvReader), at once. */
export function parseVariablesCsv(text: string): CsvVariablesResult {
  const reader = new VariablesCsvReader();
  text
    .replace(/^\uFEFF/, '')
    .split(/\r\n|\n|\r/)
    .forEach((raw, index) => {
      if (raw.length > MAX_LINE_CHARS) reader.tooLong(index + 1);
      else reader.line(raw, index + 1);
    });
  return reader.result();
}

/**
 * The declarations of the file at `path`, read as a stream and parsed 64 KiB at a time with a turn of the event
 * loop after each: a 1 MiB upload parsed at once held the loop for about 240 ms (and the work grows with
 * LIMIT_BODY_BYTES). A line longer than MAX_LINE_CHARS is one problem and is skipped without being kept, so no line
 * is scanned more than once. Line numbers are those of parseVariablesCsv (`\r\n`, `\n` and `\r` each end a line).
 */
export async function readVariablesCsv(path: string): Promise<CsvVariablesResult> {
  const reader = new VariablesCsvReader();
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: CHUNK_CHARS });
  /** The start of the current line (text after the last break); at most MAX_LINE_CHARS + 1 characters. */
  let pending = '';
  /** The current line is longer than MAX_LINE_CHARS: its text is dropped up to the next break. */
  let skipping = false;
  let line = 1;
  let first = true;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const text = pending + (first ? chunk.replace(/^\uFEFF/, '') : chunk);
      first = false;
      let start = 0;
      LINE_BREAK.lastIndex = 0;
      for (let match = LINE_BREAK.exec(text); match; match = LINE_BREAK.exec(text)) {
        // A '\r' that ends the text may be the first half of '\r\n': decided with the next chunk.
        if (match[0] === '\r' && match.index === text.length - 1) break;
        if (skipping) skipping = false;
        else reader.line(text.slice(start, match.index), line);
        line += 1;
        start = match.index + match[0].length;
      }
      const rest = text.slice(start);
      if (!skipping && rest.length > MAX_LINE_CHARS) {
        reader.tooLong(line);
        skipping = true;
      }
      pending = skipping ? (rest.endsWith('\r') ? '\r' : '') : rest;
      // Buffered chunks would otherwise follow each other in one macrotask (the stream's iterator resolves them as microtasks).
      await setImmediate();
    }
  } finally {
    stream.destroy();
  }
  if (!skipping && pending !== '') reader.line(pending.replace(/\r$/, ''), line);
  return reader.result();
}

function splitLine(line: string): string[] {
  if (!line.includes('"')) return line.split(';');
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
