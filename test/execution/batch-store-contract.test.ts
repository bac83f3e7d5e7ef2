import { afterAll, beforeAll } from '@jest/globals';
import { MySqlBatchStore } from '../../src/execution/batch-store.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { batchStoreContract } from './support/batch-store-contract.js';
import { FakeBatchStore } from './support/fake-batch-store.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

batchStoreContract('MySqlBatchStore', () => ({
  store: new MySqlBatchStore(t.services.db),
  newOwner: async () => (await t.newUser()).id,
}));

let owners = 0;
batchStoreContract('FakeBatchStore', () => ({ store: new FakeBatchStore(), newOwner: async () => ++owners }));
