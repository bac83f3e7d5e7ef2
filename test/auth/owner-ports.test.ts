import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { UserStore } from '../../src/auth/user-store.js';
import { storeTransactionOf } from '../../src/db/store-transaction.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

// The ports through which other features reach the auth-owned users table (their stores run no SQL on it).
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('OwnerNames', () => {
  it('answers the usernames of the ids that are users, once each, in or out of a transaction', async () => {
    const [a, b] = await Promise.all([t.newUser(), t.newUser()]);
    const store = new UserStore(t.services.db);
    const names = await store.usernamesOf([a.id, b.id, a.id, 999_999_999]);
    expect([...names.entries()].sort()).toEqual(
      [
        [a.id, a.username],
        [b.id, b.username],
      ].sort(),
    );
    expect(await store.usernamesOf([])).toEqual(new Map());
    await t.services.db.transaction(async (trx) => {
      expect(await store.usernamesOf([b.id], storeTransactionOf(trx))).toEqual(new Map([[b.id, b.username]]));
    });
  });
});

describe('OwnerLocks', () => {
  it("holds an owner's row until the transaction ends: a second lock of the same owner waits, another owner's does not", async () => {
    const [owner, other] = await Promise.all([t.newUser(), t.newUser()]);
    const store = new UserStore(t.services.db);
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const first = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = t.services.db.transaction(async (trx) => {
      await store.lockOwner(storeTransactionOf(trx), owner.id);
      locked();
      await held;
      order.push('first released');
    });
    await first;
    await t.services.db.transaction(async (trx) => {
      await store.lockOwner(storeTransactionOf(trx), other.id);
      order.push('other owner locked');
    });
    const second = t.services.db.transaction(async (trx) => {
      await store.lockOwner(storeTransactionOf(trx), owner.id);
      order.push('second locked');
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await Promise.all([holder, second]);
    expect(order).toEqual(['other owner locked', 'first released', 'second locked']);
  });
});
