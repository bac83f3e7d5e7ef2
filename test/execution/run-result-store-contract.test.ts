import { afterAll, beforeAll } from '@jest/globals';
import { MySqlRunResultStore } from '../../src/execution/run-result-store.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { FakeRunResultStore } from './support/fake-run-result-store.js';
import { runResultStoreContract } from './support/run-result-store-contract.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

runResultStoreContract('MySqlRunResultStore', () => ({
  store: new MySqlRunResultStore(t.services.db),
  newOwner: async () => (await t.newUser()).id,
}));

let owners = 0;
runResultStoreContract('FakeRunResultStore', () => ({
  store: new FakeRunResultStore(),
  newOwner: async () => ++owners,
}));
