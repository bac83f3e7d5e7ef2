import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { inputVariables, type ScenarioDocument, type TraceEntry } from '../engine/index.js';

/** The tag that marks an input variable as personal data; matched without regard to case (`pii`, `PII`, `Pii`). */
export const PII_TAG = 'pii';

/** What a masked value starts with (then 32 hex digits of the keyed hash). */
export const MASK_PREFIX = 'pii:';

/**
 * Masks the inputs a scenario's START node tags `pii` before they are stored in a record. A masked
 * value is replaced, whatever its type, by the string `pii:` + the first 32 hex digits of
 * HMAC-SHA256(RECORDS_MASKING_SECRET, JSON text of the value): equal values give equal masks, so
 * records stay comparable and filterable by them, but nobody without the secret can test a guess
 * (a plain hash of a birth date or a tax number would be reversed by trying them all).
 */
export class InputMasker {
  /** pii input names per compiled version (deployed versions never change). */
  private readonly piiNames = new LRUCache<string, readonly string[]>({ max: 1000 });

  constructor(private readonly secret: string) {}

  /** The version's input variables tagged pii. */
  piiInputs(cacheKey: string, document: ScenarioDocument): readonly string[] {
    let names = this.piiNames.get(cacheKey);
    if (!names) {
      names = inputVariables(document).filter((variable) => variable.tags?.some((tag) => tag.toLowerCase() === PII_TAG)).map((variable) => variable.name);
      this.piiNames.set(cacheKey, names);
    }
    return names;
  }

  /** The inputs with each named one that is present masked, and the names masked. */
  maskInputs(inputs: Record<string, unknown>, names: readonly string[]): { inputs: Record<string, unknown>; masked: string[] } {
    const masked = names.filter((name) => Object.hasOwn(inputs, name));
    if (masked.length === 0) return { inputs, masked };
    const copy = Object.assign({}, inputs);
    for (const name of masked) copy[name] = this.mask(inputs[name]);
    return { inputs: copy, masked };
  }

  /** The trace with what its nodes read or wrote under a masked input's name masked too. */
  maskTrace(trace: TraceEntry[], names: readonly string[]): TraceEntry[] {
    if (names.length === 0) return trace;
    const maskVariables = (variables: Record<string, unknown>) => this.maskInputs(variables, names).inputs;
    return trace.map((entry) => Object.assign({}, entry, { read: maskVariables(entry.read), wrote: maskVariables(entry.wrote) }));
  }

  mask(value: unknown): string {
    return MASK_PREFIX + createHmac('sha256', this.secret).update(JSON.stringify(value) ?? 'null').digest('hex').slice(0, 32);
  }
}
