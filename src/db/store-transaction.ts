import type { Knex } from 'knex';

declare const storeTransaction: unique symbol;

/**
 * A transaction as a store's callers see it: begun by the store (`transaction(work)`), handed back to
 * its writes, opaque to everyone else. Services decide where transactions begin and end without
 * knowing Knex; the MySQL stores unwrap it (`knexOf`), the in-memory fakes keep their own.
 */
export interface StoreTransaction {
  readonly [storeTransaction]: true;
}

/** The Knex transaction behind a StoreTransaction a MySQL store began. */
export function knexOf(trx: StoreTransaction): Knex.Transaction {
  return trx as unknown as Knex.Transaction;
}

/** A Knex transaction as callers of a store see it. */
export function storeTransactionOf(trx: Knex.Transaction): StoreTransaction {
  return trx as unknown as StoreTransaction;
}
