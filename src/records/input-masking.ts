import { createHmac } from 'node:crypto';
import { inputVariables, isPiiTagged, type ScenarioDocument, type TraceEntry } from '../engine/index.js';

/** What a masked value starts with (then 32 hex digits of the keyed hash). */
const MASK_PREFIX = 'pii:';

/**
 * Masks the inputs a scenario's START node tags `pii` before they are stored in a record. A masked
 * value is replaced, whatever its type, by the string `pii:` + the first 32 hex digits of
 * HMAC-SHA256(RECORDS_MASKING_SECRET, JSON text of the value): equal values give equal masks, so
 * records stay comparable and filterable by them, but nobody without the secret can test a guess
 * (a plain hash of a birth date or a tax number would be reversed by trying them all).
 */
export class InputMasker {
  /** pii input names per scenario document (deployed versions never change; a document object is shared by the runs of its version). */
  private readonly piiNames = new WeakMap<ScenarioDocument, readonly string[]>();

  constructor(private readonly secret: string) {}

  /** The version's input variables tagged pii. */
  piiInputs(document: ScenarioDocument): readonly string[] {
    let names = this.piiNames.get(document);
    if (!names) {
      names = inputVariables(document)
        .filter(isPiiTagged)
        .map((variable) => variable.name);
      this.piiNames.set(document, names);
    }
    return names;
  }

  /** The inputs with each named one that is present masked, and the names masked. */
  maskInputs(
    inputs: Record<string, unknown>,
    names: readonly string[],
  ): { inputs: Record<string, unknown>; masked: string[] } {
    const masked = names.filter((name) => Object.hasOwn(inputs, name));
    if (masked.length === 0) return { inputs, masked };
    const copy = Object.assign({}, inputs);
    for (const name of masked) copy[name] = this.mask(inputs[name]);
    return { inputs: copy, masked };
  }

  /**
   * The trace with what its nodes read or wrote under a masked input's name masked too, and the masked
   * inputs' values wherever else the trace holds them (see `ValueScrubber`): a SCENARIO_CALL's
   * `inputs`, a copy a SCRIPT made under another name, a text that contains the value.
   */
  maskTrace(trace: TraceEntry[], names: readonly string[], inputs: Record<string, unknown> = {}): TraceEntry[] {
    if (names.length === 0) return trace;
    const scrubber = this.scrubberFor(names, inputs);
    const maskVariables = (variables: Record<string, unknown>) =>
      scrubber.values(this.maskInputs(variables, names).inputs) as Record<string, unknown>;
    return trace.map((entry) =>
      Object.assign({}, entry, { read: maskVariables(entry.read), wrote: maskVariables(entry.wrote) }),
    );
  }

  /**
   * A run's error with the masked inputs' values masked in its messages: a validator's or a script's
   * message that quotes one. The input checks never quote a pii input's value themselves.
   */
  maskError<E extends { message: string; violations?: unknown }>(
    error: E,
    names: readonly string[],
    inputs: Record<string, unknown>,
  ): E {
    const scrubber = this.scrubberFor(names, inputs);
    const masked: E = Object.assign({}, error, { message: scrubber.text(error.message) });
    if (Array.isArray(error.violations)) {
      masked.violations = error.violations.map((violation: unknown) =>
        isRecord(violation) && typeof violation.message === 'string'
          ? Object.assign({}, violation, { message: scrubber.text(violation.message) })
          : violation,
      );
    }
    return masked;
  }

  private scrubberFor(names: readonly string[], inputs: Record<string, unknown>): ValueScrubber {
    return new ValueScrubber(
      names.filter((name) => Object.hasOwn(inputs, name)).map((name) => inputs[name]),
      (value) => this.mask(value),
    );
  }

  mask(value: unknown): string {
    return (
      MASK_PREFIX +
      createHmac('sha256', this.secret)
        .update(JSON.stringify(value) ?? 'null')
        .digest('hex')
        .slice(0, 32)
    );
  }
}

/** Shorter strings and numbers (`true`, `42`, `"N"`) are too common to mask wherever they appear: they are masked under their name only. */
const MIN_MATCH_CHARS = 4;

/**
 * V8 quotes at most this many characters of a text it cannot parse (`Unexpected token 'j', "jane@examp"... is
 * not valid JSON`, or a window around the position: `..."e@example."...`): every such window of a masked string is
 * searched for too.
 */
const V8_SNIPPET_CHARS = 10;

/** Stripped of everything but letters and digits, a value must keep this many characters to be searched for so. */
const MIN_STRIPPED_CHARS = 6;

/**
 * Masks the values of a run's masked inputs wherever they appear: a value equal to one (a MAP or
 * VECTOR compared by its JSON text) becomes its mask, and a text that contains a string or number of
 * at least MIN_MATCH_CHARS characters gets the mask in its place (`"555-12-3456!"` → `"pii:…!"`). A
 * text is searched for each value as written, JSON-escaped (`ja\"ne`), URL-encoded (`jane%40x`, `jane+doe`),
 * cut as the input checks quote it (40 characters of JSON, then `…`), upper- and lower-cased, trimmed, without
 * its separators, and for every 10-character window of it (V8's snippet of a text it could not parse); a MAP or
 * VECTOR is also searched for as its JSON text and, leaf by leaf, for each string or number in it (`card.number`
 * copied or quoted alone).
 */
class ValueScrubber {
  private readonly equal = new Map<unknown, string>();
  private readonly structured = new Map<string, string>();
  private texts: Array<readonly [string, string]> = [];

  constructor(values: unknown[], mask: (value: unknown) => string) {
    for (const value of values) {
      if (typeof value === 'string' || typeof value === 'number') {
        this.addLeaf(value, mask);
      } else if (value !== null && typeof value === 'object') {
        const json = JSON.stringify(value);
        this.structured.set(json, mask(value));
        this.addText(json, mask(value));
        for (const leaf of leavesOf(value)) this.addLeaf(leaf, mask);
      }
    }
    // Longest first: a whole value is replaced before a shorter form of it (its 40-character cut) could split it.
    this.texts.sort(([a], [b]) => b.length - a.length);
  }

  text(text: string): string {
    return this.texts.reduce((scrubbed, [found, mask]) => scrubbed.replaceAll(found, mask), text);
  }

  /** The value with every match, at any depth, masked. */
  values(value: unknown): unknown {
    if (this.equal.size === 0 && this.structured.size === 0) return value;
    const masked = this.equal.get(value);
    if (masked !== undefined) return masked;
    if (typeof value === 'string') return this.text(value);
    if (value === null || typeof value !== 'object') return value;
    if (this.structured.size > 0) {
      const whole = this.structured.get(JSON.stringify(value));
      if (whole !== undefined) return whole;
    }
    if (Array.isArray(value)) return value.map((inner) => this.values(inner));
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, this.values(inner)]));
  }

  private addLeaf(value: string | number, mask: (value: unknown) => string): void {
    const text = String(value);
    if (text.length < MIN_MATCH_CHARS) return;
    this.equal.set(value, mask(value));
    this.addText(text, mask(value));
  }

  private addText(found: string, mask: string): void {
    const json = JSON.stringify(found);
    const forms = new Set([
      found,
      json.slice(1, -1),
      encodeURIComponent(found),
      new URLSearchParams({ v: found }).toString().slice(2),
    ]);
    // check-inputs.ts quotes at most 40 characters of a value's JSON text (the opening quote and 39 more), then `…`.
    if (json.length > 40) forms.add(json.slice(1, 40));
    // Simple transforms a script may make before the value reaches an error or a trace: case, surrounding blanks,
    // separators dropped (`123-45-6789` → `123456789`).
    for (const transformed of [found.toUpperCase(), found.toLowerCase(), found.trim()]) forms.add(transformed);
    const stripped = found.replace(/[^\p{L}\p{N}]+/gu, '');
    if (stripped.length >= MIN_STRIPPED_CHARS && stripped !== found) forms.add(stripped);
    // V8's snippets of a text it could not parse: any window of its length.
    for (let start = 0; start + V8_SNIPPET_CHARS < found.length; start += 1)
      forms.add(found.slice(start, start + V8_SNIPPET_CHARS));
    for (const form of forms) if (form.length >= MIN_MATCH_CHARS) this.texts.push([form, mask]);
  }
}

/** The strings and numbers inside a MAP or VECTOR, at any depth. */
function leavesOf(value: object): Array<string | number> {
  const leaves: Array<string | number> = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string' || typeof item === 'number') leaves.push(item);
    else if (item !== null && typeof item === 'object') stack.push(...Object.values(item));
  }
  return leaves;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
