import { describe, expect, it } from '@jest/globals';
import { isDuplicateKey } from '../../../src/db/mysql-errors.js';
import type { ScenarioStore } from '../../../src/scenarios/scenario-store-type.js';
import type { VersionContent } from '../../../src/scenarios/scenario-types.js';

/** What the fake and the MySQL store both promise (one suite, every implementation). */
export interface ScenarioStoreUnderTest {
  store: ScenarioStore;
  newOwner(): Promise<{ id: number; username: string }>;
}

const content = (description: string): VersionContent => ({
  content: `{"nodes":["${description}"]}`,
  nodeProperties: '{"n":{}}',
  description,
});

async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

export function scenarioStoreContract(label: string, setUp: () => ScenarioStoreUnderTest): void {
  describe(`${label} (ScenarioStore contract)`, () => {
    it("finds a scenario by id and by its owner's case-sensitive name, with the owner's name", async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const id = await store.transaction((trx) => store.insertScenario(trx, owner.id, 'Credit'));
      const expected = { id, ownerId: owner.id, ownerName: owner.username, name: 'Credit' };
      expect(await store.findById(id)).toEqual(expected);
      expect(await store.findByName(owner.id, 'Credit')).toEqual(expected);
      expect(await store.findByName(owner.id, 'credit')).toBeUndefined();
      expect(await store.findByName((await newOwner()).id, 'Credit')).toBeUndefined();
      expect(await store.findById(id + 1000)).toBeUndefined();
    });

    it("lists the owner's scenarios in binary name order and no one else's", async () => {
      const { store, newOwner } = setUp();
      const [owner, other] = [await newOwner(), await newOwner()];
      await store.transaction(async (trx) => {
        for (const name of ['b', 'B', 'a']) await store.insertScenario(trx, owner.id, name);
        await store.insertScenario(trx, other.id, 'A');
      });
      expect((await store.listByOwner(owner.id)).map((s) => s.name)).toEqual(['B', 'a', 'b']);
    });

    it("pages the owner's scenarios newest first, with each one's latest deployed version", async () => {
      const { store, newOwner } = setUp();
      const [owner, other] = [await newOwner(), await newOwner()];
      const ids = await store.transaction(async (trx) => {
        const made: number[] = [];
        for (const name of ['first', 'second', 'third']) made.push(await store.insertScenario(trx, owner.id, name));
        await store.insertScenario(trx, other.id, 'theirs');
        return made;
      });
      const content = { content: '{}', nodeProperties: '{}', description: '' };
      await store.transaction(async (trx) => {
        const locked = await store.lockById(trx, ids[1]);
        if (!locked) throw new Error('the scenario was not found');
        const { versionNumber } = await store.insertDeployedVersion(trx, locked, content, 'develop');
        await store.insertDeployedVersion(trx, { ...locked, nextVersion: versionNumber + 1 }, content, 'develop');
      });
      const first = await store.listPage(owner.id, 2);
      expect(first.map((s) => [s.name, s.deployedVersion])).toEqual([
        ['third', null],
        ['second', 2],
      ]);
      expect(first[0]).toMatchObject({ ownerId: owner.id, createdAt: expect.any(Date), updatedAt: expect.any(Date) });
      expect((await store.listPage(owner.id, 2, first[1].id)).map((s) => s.name)).toEqual(['first']);
    });

    it('refuses a name the owner already has, on insert and on rename, with a duplicate-key error; another owner may take it', async () => {
      const { store, newOwner } = setUp();
      const [owner, other] = [await newOwner(), await newOwner()];
      const [first, second] = await store.transaction(async (trx) => [
        await store.insertScenario(trx, owner.id, 'x'),
        await store.insertScenario(trx, owner.id, 'y'),
      ]);
      expect(
        isDuplicateKey(await rejection(store.transaction((trx) => store.insertScenario(trx, owner.id, 'x')))),
      ).toBe(true);
      expect(isDuplicateKey(await rejection(store.transaction((trx) => store.rename(trx, second, 'x'))))).toBe(true);
      await store.transaction((trx) => store.insertScenario(trx, other.id, 'x'));
      await store.transaction((trx) => store.rename(trx, first, 'z'));
      expect((await store.listByOwner(owner.id)).map((s) => s.name)).toEqual(['y', 'z']);
    });

    it('keeps nothing a transaction wrote when its work throws', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const kept = await store.transaction((trx) => store.insertScenario(trx, owner.id, 'kept'));
      const failure = new Error('work failed');
      await expect(
        store.transaction(async (trx) => {
          const id = await store.insertScenario(trx, owner.id, 'lost');
          await store.putDevelopVersion(trx, id, content('lost'), 'import');
          await store.rename(trx, kept, 'renamed');
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect((await store.listByOwner(owner.id)).map((s) => s.name)).toEqual(['kept']);
    });

    it('replaces the development version in place, and opens it before any deployed version', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const id = await store.transaction((trx) => store.insertScenario(trx, owner.id, 's'));
      expect(await store.findOpenedVersion(id)).toBeUndefined();
      const developId = await store.transaction((trx) => store.putDevelopVersion(trx, id, content('one'), 'import'));
      await store.transaction(async (trx) =>
        store.insertDeployedVersion(trx, (await store.lockById(trx, id))!, content('one'), 'develop'),
      );
      expect(await store.transaction((trx) => store.putDevelopVersion(trx, id, content('two'), 'develop'))).toBe(
        developId,
      );
      expect(await store.findDevelopVersion(id)).toEqual({
        id: developId,
        scenarioId: id,
        status: 'DEVELOP',
        versionNumber: null,
        sourceVersion: 'develop',
        description: 'two',
        content: content('two').content,
        nodeProperties: content('two').nodeProperties,
        createdAt: expect.any(Date),
        replayId: null,
      });
      expect((await store.findOpenedVersion(id))?.id).toBe(developId);
    });

    it('numbers deployed versions 1, 2, 3 under the lock, advancing the locked counter, and finds them by number and as the latest', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const id = await store.transaction((trx) => store.insertScenario(trx, owner.id, 's'));
      const deployed = await store.transaction(async (trx) => {
        const locked = (await store.lockById(trx, id))!;
        expect(locked).toEqual({ id, nextVersion: 1 });
        const first = await store.insertDeployedVersion(trx, locked, content('v1'), 'import');
        const second = await store.insertDeployedVersion(trx, locked, content('v2'), 'develop', 'replay-1');
        expect(locked.nextVersion).toBe(3);
        return [first, second];
      });
      expect(deployed.map((v) => v.versionNumber)).toEqual([1, 2]);
      expect(await store.transaction(async (trx) => (await store.lockById(trx, id))?.nextVersion)).toBe(3);
      expect(await store.transaction((trx) => store.lockById(trx, id + 1000))).toBeUndefined();
      expect(await store.findLatestDeployed(id)).toMatchObject({
        id: deployed[1].id,
        versionNumber: 2,
        status: 'DEPLOYED',
        description: 'v2',
        sourceVersion: 'develop',
        replayId: 'replay-1',
      });
      expect(await store.findDeployedVersion(id, 1)).toMatchObject({
        id: deployed[0].id,
        description: 'v1',
        content: content('v1').content,
        replayId: null,
      });
      expect(await store.findDeployedVersion(id, 3)).toBeUndefined();
      expect((await store.findOpenedVersion(id))?.versionNumber).toBe(2);
    });

    it('lists versions without their content: develop first, then deployed from the newest', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const id = await store.transaction((trx) => store.insertScenario(trx, owner.id, 's'));
      await store.transaction(async (trx) => {
        const locked = (await store.lockById(trx, id))!;
        await store.insertDeployedVersion(trx, locked, content('v1'), 'import');
        await store.putDevelopVersion(trx, id, content('dev'), 'develop');
        await store.insertDeployedVersion(trx, locked, content('v2'), 'develop');
      });
      const versions = await store.listVersions(id);
      expect(versions.map((v) => [v.status, v.versionNumber, v.description])).toEqual([
        ['DEVELOP', null, 'dev'],
        ['DEPLOYED', 2, 'v2'],
        ['DEPLOYED', 1, 'v1'],
      ]);
      expect(versions[0]).not.toHaveProperty('content');
      expect(versions[0]).not.toHaveProperty('nodeProperties');
      expect(versions[1].createdAt).toBeInstanceOf(Date);
    });

    it('answers the latest deployed version by owner and name: none for an unknown name, null before the first deploy', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      expect(await store.findLatestDeployedByName(owner.id, 'nope')).toBeUndefined();
      const id = await store.transaction(async (trx) => {
        const created = await store.insertScenario(trx, owner.id, 's');
        await store.putDevelopVersion(trx, created, content('dev'), 'import');
        return created;
      });
      expect(await store.findLatestDeployedByName(owner.id, 's')).toEqual({
        scenarioId: id,
        ownerName: owner.username,
        version: null,
      });
      await store.transaction(async (trx) => {
        const locked = (await store.lockById(trx, id))!;
        await store.insertDeployedVersion(trx, locked, content('v1'), 'import');
        await store.insertDeployedVersion(trx, locked, content('v2'), 'develop');
      });
      const found = await store.findLatestDeployedByName(owner.id, 's');
      expect(found).toMatchObject({
        scenarioId: id,
        ownerName: owner.username,
        version: { versionNumber: 2, description: 'v2', status: 'DEPLOYED', content: content('v2').content },
      });
      expect(found?.version).toEqual(await store.findLatestDeployed(id));
    });

    it('replaces test cases in the order given, updates one in place, and keeps their variables as JSON keeps them', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const id = await store.transaction((trx) => store.insertScenario(trx, owner.id, 's'));
      const other = await store.transaction((trx) => store.insertScenario(trx, owner.id, 'other'));
      await store.transaction(async (trx) => {
        await store.replaceTestCases(trx, id, [
          { name: 'z', variables: [{ name: 'a', value: 1 }], expression: 'true', ignore: false },
          {
            name: 'a',
            variables: [{ name: 'b', value: { deep: [1, 'x', null] } }, { name: 'c' }],
            expression: 'score > 1',
            ignore: true,
          },
        ]);
        await store.replaceTestCases(trx, other, [{ name: 'o', variables: [], expression: 'true', ignore: false }]);
      });
      const cases = await store.listTestCases(id);
      expect(cases.map((c) => [c.name, c.variables, c.expression, c.ignore, c.scenarioId])).toEqual([
        ['z', [{ name: 'a', value: 1 }], 'true', false, id],
        ['a', [{ name: 'b', value: { deep: [1, 'x', null] } }, { name: 'c' }], 'score > 1', true, id],
      ]);
      expect(await store.findTestCase(cases[1].id)).toEqual(cases[1]);
      await store.transaction((trx) =>
        store.updateTestCase(trx, cases[0].id, {
          name: 'renamed',
          variables: [{ name: 'a', value: 'two' }],
          expression: 'false',
          ignore: true,
        }),
      );
      expect(await store.findTestCase(cases[0].id)).toEqual({
        id: cases[0].id,
        scenarioId: id,
        name: 'renamed',
        variables: [{ name: 'a', value: 'two' }],
        expression: 'false',
        ignore: true,
      });
      await store.transaction((trx) => store.replaceTestCases(trx, id, []));
      expect(await store.listTestCases(id)).toEqual([]);
      expect(await store.findTestCase(cases[0].id)).toBeUndefined();
      expect((await store.listTestCases(other)).map((c) => c.name)).toEqual(['o']);
    });
  });
}
