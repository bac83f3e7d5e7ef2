import type { DeployedScenario } from '../../src/scenarios/deployed-scenarios.js';

/** The champion of the live paths' unit tests: version 70 (label `1`) of scenario 7, owned by user 1. */
export function championOf(document: unknown): DeployedScenario {
  return {
    scenarioId: 7,
    versionId: 70,
    ownerId: 1,
    ownerName: 'alice',
    name: 's',
    version: '1',
    cacheKey: 'version:70',
    document,
  } as unknown as DeployedScenario;
}
