import { ER_DUP_ENTRY } from '../../src/db/mysql-errors.js';
import type { StoreTransaction } from '../../src/db/store-transaction.js';

/** The error a unique index answers in MySQL, as the fakes throw it (`isDuplicateKey` recognises both). */
export function duplicateKeyError(what: string): Error {
  return Object.assign(new Error(`Duplicate entry '${what}'`), { errno: ER_DUP_ENTRY, code: 'ER_DUP_ENTRY' });
}

/**
 * A deep copy of plain data (objects, arrays, Dates, Buffers) made in the calling realm. Not
 * structuredClone: under jest's ESM VM its copies are of the outer realm, so a copied Date is not
 * `expect.any(Date)` and a fake would answer what the real store never does.
 */
export function copyOf<T>(value: T): T {
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Buffer.isBuffer(value)) return Buffer.from(value) as T;
  if (Array.isArray(value)) return value.map(copyOf) as T;
  if (value instanceof Set) return new Set([...value].map(copyOf)) as T;
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, copyOf(v)])) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyOf(v)])) as T;
  return value;
}

/**
 * Transactions of an in-memory fake store: one at a time (as if every transaction locked what it
 * touches), and all or nothing: the state is copied when one begins and put back when its work throws.
 */
export class FakeTransactions<State> {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly snapshot: () => State,
    private readonly restore: (state: State) => void,
  ) {}

  run<T>(work: (trx: StoreTransaction) => Promise<T>): Promise<T> {
    const result = this.queue.then(async () => {
      const before = this.snapshot();
      try {
        return await work({} as StoreTransaction);
      } catch (error) {
        this.restore(before);
        throw error;
      }
    });
    this.queue = result.catch(() => undefined);
    return result;
  }
}
