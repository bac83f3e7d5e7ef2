import { afterAll, beforeAll } from '@jest/globals';
import { UserStore } from '../../src/auth/user-store.js';
import { MySqlScenarioStore } from '../../src/scenarios/scenario-store.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { FakeScenarioStore } from './support/fake-scenario-store.js';
import { scenarioStoreContract } from './support/scenario-store-contract.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

scenarioStoreContract('MySqlScenarioStore', () => ({
  store: new MySqlScenarioStore(t.services.db, new UserStore(t.services.db)),
  newOwner: () => t.newUser(),
}));

let owners = 0;
scenarioStoreContract('FakeScenarioStore', () => {
  const store = new FakeScenarioStore();
  return {
    store,
    async newOwner() {
      const owner = { id: ++owners, username: `owner-${owners}` };
      store.addOwner(owner.id, owner.username);
      return owner;
    },
  };
});
