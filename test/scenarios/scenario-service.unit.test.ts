import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine } from '../../src/engine/index.js';
import { DeployedScenarioResolver } from '../../src/scenarios/deployed-scenario-resolver.js';
import { ScenarioService, type ScenarioActor } from '../../src/scenarios/scenario-service.js';
import type { ScenarioImportDto } from '../../src/scenarios/scenario-types.js';
import { fakePorts } from '../engine/support/scenario-builder.js';
import { FakeScenarioStore } from './support/fake-scenario-store.js';
import { simpleScenario } from './support/fixtures.js';

/**
 * Scenario management's rules on the in-memory store and the real engine (no MariaDB: the fake passes the
 * MySQL store's contract, scenario-store.test.ts). The HTTP tests cover the same operations end to end.
 */
const ALICE: ScenarioActor = { owner: { id: 1, username: 'alice' }, isAdmin: false };
const BOB: ScenarioActor = { owner: { id: 2, username: 'bob' }, isAdmin: false };
const ADMIN: ScenarioActor = { owner: { id: 3, username: 'root' }, isAdmin: true };

const engines: ScenarioEngine[] = [];
afterAll(async () => {
  for (const engine of engines) await engine.dispose();
});

function management() {
  const store = new FakeScenarioStore().addOwner(1, 'alice').addOwner(2, 'bob').addOwner(3, 'root');
  const deployed = new DeployedScenarioResolver(store);
  const engine = new ScenarioEngine({ ports: fakePorts({ scenarios: deployed }) });
  engines.push(engine);
  return { store, deployed, service: new ScenarioService(store, engine, deployed) };
}

const asImport = (name: string, options?: Parameters<typeof simpleScenario>[1]) =>
  simpleScenario(name, options) as unknown as ScenarioImportDto;
const DEVELOP_ONLY = { overwriteDevelop: true, overwriteDeploy: false };

describe('ScenarioService on the in-memory store', () => {
  it('imports a scenario as a development version, opens it, and deploys it as 1, then 2', async () => {
    const { service, deployed } = management();
    const [outcome] = await service.importScenarios(ALICE, asImport('credit'), DEVELOP_ONLY);
    expect(outcome).toMatchObject({ name: 'credit' });
    const id = outcome.scenarioId!;
    const opened = await service.open(ALICE, id);
    expect(opened).toMatchObject({ name: 'credit', version: 'develop' });
    expect(await deployed.find(1, 'credit')).toBeNull();
    expect(await service.deploy(ALICE, id)).toBe('1');
    expect(await service.deploy(ALICE, id, { skipValidation: true })).toBe('2');
    expect((await service.listVersions(ALICE, id)).map((v) => v.version)).toEqual(['develop', '2', '1']);
    expect(await deployed.require(1, 'credit')).toMatchObject({ ownerName: 'alice', name: 'credit', version: '2' });
    expect(await service.deployedMatchesDevelop(ALICE, id)).toBe(true);
  });

  it('debugs the development version on the engine', async () => {
    const { service } = management();
    const [outcome] = await service.importScenarios(ALICE, asImport('credit'), DEVELOP_ONLY);
    const debug = await service.debug(ALICE, outcome.scenarioId!, { income: 50000, age: 30 });
    expect(debug).toMatchObject({ version: 'develop', result: { score: 80 } });
  });

  it('refuses to deploy a scenario whose test case fails (422), and deploys nothing', async () => {
    const { service, store } = management();
    const [outcome] = await service.importScenarios(
      ALICE,
      asImport('credit', { testExpression: 'score === 81' }),
      DEVELOP_ONLY,
    );
    await expect(service.deploy(ALICE, outcome.scenarioId!)).rejects.toMatchObject({ status: 422 });
    expect(await store.findLatestDeployed(Number(outcome.scenarioId))).toBeUndefined();
  });

  it('answers 409 NAME_TAKEN to a rename or copy onto a name the owner has, and keeps both scenarios', async () => {
    const { service } = management();
    const [first] = await service.importScenarios(ALICE, asImport('one'), DEVELOP_ONLY);
    await service.importScenarios(ALICE, asImport('two'), DEVELOP_ONLY);
    await expect(service.rename(ALICE, 'one', 'two')).rejects.toMatchObject({ status: 409, code: 'NAME_TAKEN' });
    await expect(service.copy(ALICE, first.scenarioId!, 'two')).rejects.toMatchObject({
      status: 409,
      code: 'NAME_TAKEN',
    });
    const copy = await service.copy(ALICE, first.scenarioId!, 'three');
    expect(copy).toMatchObject({ name: 'three', version: 'develop' });
    expect(copy.testCases).toHaveLength(1);
    expect(await service.rename(ALICE, 'one', 'uno')).toMatchObject({ name: 'uno', owner: 'alice' });
    // Another owner's namespace is their own.
    await service.importScenarios(BOB, asImport('two'), DEVELOP_ONLY);
  });

  it('lets an owner and an admin open a scenario, another owner gets 403, an unknown id 404', async () => {
    const { service } = management();
    const [outcome] = await service.importScenarios(ALICE, asImport('credit'), DEVELOP_ONLY);
    const id = outcome.scenarioId!;
    await expect(service.open(BOB, id)).rejects.toMatchObject({ status: 403 });
    expect(await service.open(ADMIN, id)).toMatchObject({ name: 'credit' });
    await expect(service.open(ALICE, '999')).rejects.toMatchObject({ status: 404, code: 'SCENARIO_NOT_FOUND' });
  });
});
