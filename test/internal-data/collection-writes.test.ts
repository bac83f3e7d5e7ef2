import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from '@jest/globals';
import { InternalDataStore } from '../../src/internal-data/internal-data-store.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { collectionWritesContract } from './support/collection-writes-contract.js';
import { FakeInternalDataStore } from './support/fake-internal-data-store.js';
import { UserStore } from '../../src/auth/user-store.js';

let t: TestApp;
const tables: string[] = [];
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  for (const table of tables) await t.services.db.raw('DROP TABLE IF EXISTS ??', [table]);
  await t.close();
});

/** Not `idc_<n>`, so no entry of another test can own it; still a collection table name to orphanTables. */
const newTable = () => {
  const table = `idc_w${randomBytes(5).toString('hex')}`;
  tables.push(table);
  return table;
};

collectionWritesContract('InternalDataStore', () => ({
  store: new InternalDataStore(t.services.db, new UserStore(t.services.db)),
  newOwner: () => t.newUser(),
  tableName: newTable,
}));

let owners = 0;
collectionWritesContract('FakeInternalDataStore', () => {
  const store = new FakeInternalDataStore();
  return {
    store,
    async newOwner() {
      const owner = { id: ++owners, username: `owner-${owners}` };
      store.addOwner(owner.id, owner.username);
      return owner;
    },
    tableName: newTable,
  };
});
