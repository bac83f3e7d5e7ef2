import { afterAll, beforeAll } from '@jest/globals';
import { MySqlModelStore } from '../../src/models/model-store.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { FakeModelStore } from './support/fake-model-store.js';
import { modelStoreContract } from './support/model-store-contract.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

modelStoreContract('MySqlModelStore', () => ({
  store: new MySqlModelStore(t.services.db),
  newOwner: async () => (await t.newUser()).id,
}));

let owners = 0;
modelStoreContract('FakeModelStore', () => ({ store: new FakeModelStore(), newOwner: async () => ++owners }));
