import { describe, expect, it } from '@jest/globals';
import { DeployedScenarioResolver } from '../../src/scenarios/deployed-scenario-resolver.js';
import type { ScenarioStore } from '../../src/scenarios/scenario-store-type.js';
import type { VersionContent } from '../../src/scenarios/scenario-types.js';
import { FakeScenarioStore } from './support/fake-scenario-store.js';

/** "The latest deployed version" and its cache, on the in-memory store (held to MySqlScenarioStore's contract). */
const ALICE = 1;
const version = (description: string): VersionContent => ({
  content: '{"nodes":[],"edges":[]}',
  nodeProperties: '{}',
  description,
});

async function scenario(store: FakeScenarioStore, name: string, deploys: number): Promise<number> {
  return store.transaction(async (trx) => {
    const id = await store.insertScenario(trx, ALICE, name);
    await store.putDevelopVersion(trx, id, version('dev'), 'import');
    const locked = (await store.lockById(trx, id))!;
    for (let n = 0; n < deploys; n += 1)
      await store.insertDeployedVersion(trx, locked, version(`v${n + 1}`), 'develop');
    return id;
  });
}

async function deployAgain(store: FakeScenarioStore, id: number): Promise<void> {
  await store.transaction(async (trx) => {
    await store.insertDeployedVersion(trx, (await store.lockById(trx, id))!, version('again'), 'develop');
  });
}

describe('DeployedScenarioResolver on the in-memory store', () => {
  it('answers the latest deployed version, 404 SCENARIO_NOT_FOUND for an unknown name and SCENARIO_NOT_DEPLOYED before the first deploy', async () => {
    const store = new FakeScenarioStore().addOwner(ALICE, 'alice');
    await scenario(store, 'credit', 2);
    await scenario(store, 'draft', 0);
    const resolver = new DeployedScenarioResolver(store);
    expect(await resolver.require(ALICE, 'credit')).toMatchObject({
      ownerId: ALICE,
      ownerName: 'alice',
      name: 'credit',
      version: '2',
    });
    await expect(resolver.require(ALICE, 'nope')).rejects.toMatchObject({ status: 404, code: 'SCENARIO_NOT_FOUND' });
    await expect(resolver.require(ALICE, 'draft')).rejects.toMatchObject({
      status: 404,
      code: 'SCENARIO_NOT_DEPLOYED',
    });
    expect(await resolver.find(ALICE, 'draft')).toBeNull();
    expect(await resolver.resolveDeployed({ ownerId: ALICE, name: 'credit' })).toMatchObject({
      cacheKey: expect.any(String),
      document: { content: '{"nodes":[],"edges":[]}' },
    });
  });

  it('keeps an answer, a miss included, while fresh; a deploy in this process is seen at once through invalidate', async () => {
    const store = new FakeScenarioStore().addOwner(ALICE, 'alice');
    const id = await scenario(store, 'credit', 1);
    const resolver = new DeployedScenarioResolver(store, undefined, { freshMs: 60_000 });
    expect((await resolver.require(ALICE, 'credit')).version).toBe('1');
    await expect(resolver.require(ALICE, 'later')).rejects.toMatchObject({ code: 'SCENARIO_NOT_FOUND' });
    await deployAgain(store, id);
    await scenario(store, 'later', 1);
    expect((await resolver.require(ALICE, 'credit')).version).toBe('1');
    await expect(resolver.require(ALICE, 'later')).rejects.toMatchObject({ code: 'SCENARIO_NOT_FOUND' });
    resolver.invalidate(ALICE, 'credit');
    resolver.invalidate(ALICE, 'later');
    expect((await resolver.require(ALICE, 'credit')).version).toBe('2');
    expect((await resolver.require(ALICE, 'later')).version).toBe('1');
  });

  it('serves the answer in hand while the store is down, within the stale bound, and reports the failed reads', async () => {
    const fake = new FakeScenarioStore().addOwner(ALICE, 'alice');
    await scenario(fake, 'credit', 1);
    let down = false;
    const store: ScenarioStore = Object.assign(Object.create(fake) as ScenarioStore, {
      findLatestDeployedByName: (ownerId: number, name: string) =>
        down ? Promise.reject(new Error('MySQL is down')) : fake.findLatestDeployedByName(ownerId, name),
    });
    const failures: unknown[] = [];
    const resolver = new DeployedScenarioResolver(store, undefined, {
      freshMs: 1,
      maxStaleMs: 60_000,
      onRefreshError: (error) => failures.push(error),
    });
    expect((await resolver.require(ALICE, 'credit')).version).toBe('1');
    down = true;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await resolver.require(ALICE, 'credit')).version).toBe('1');
    for (let waited = 0; failures.length === 0 && waited < 2000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(failures.length).toBeGreaterThan(0);
    await expect(resolver.require(ALICE, 'elsewhere')).rejects.toThrow('MySQL is down');
  });
});
