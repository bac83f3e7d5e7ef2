import type { StoreTransaction } from '../db/store-transaction.js';

/**
 * Usernames by user id, for features that show whose a resource is (a scenario's or a collection's owner). Auth owns
 * the `users` table: no other feature's SQL reads it. UserStore implements it.
 */
export interface OwnerNames {
  /** The usernames of those of `ids` that are users, read within `trx` when given (so a store's transaction needs no second connection). */
  usernamesOf(ids: readonly number[], trx?: StoreTransaction): Promise<Map<number, string>>;
}

/**
 * Serialises one owner's work across processes: locks the owner's user row until `trx` ends (replay's per-owner
 * limits count, then insert or claim, behind it). UserStore implements it.
 */
export interface OwnerLocks {
  lockOwner(trx: StoreTransaction, ownerId: number): Promise<void>;
}
