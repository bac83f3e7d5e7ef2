import type { StoreTransaction } from '../../../src/db/store-transaction.js';
import type { LockedScenario, ScenarioStore } from '../../../src/scenarios/scenario-store-type.js';
// The records the store interface speaks in, under one name: the fake stores and answers the same ones.
import type * as Scenarios from '../../../src/scenarios/scenario-types.js';
import { copyOf, duplicateKeyError, FakeTransactions } from '../../support/fake-transactions.js';

interface StoredScenario {
  id: number;
  ownerId: number;
  name: string;
  nextVersion: number;
  createdAt: Date;
  updatedAt: Date;
}
interface StoredTestCase extends Scenarios.TestCaseRecord {
  position: number;
}
interface State {
  scenarios: StoredScenario[];
  versions: Scenarios.VersionRecord[];
  testCases: StoredTestCase[];
  ids: { scenario: number; version: number; testCase: number };
}

/** Binary order of names, as the `utf8mb4_bin` columns sort them. */
const byName = (a: { name: string }, b: { name: string }): number =>
  Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
/** Develop first, then deployed by descending number (the MySQL store's `version_number IS NOT NULL, version_number DESC`). */
const openedFirst = (a: Scenarios.VersionRecord, b: Scenarios.VersionRecord): number =>
  a.versionNumber === null ? -1 : b.versionNumber === null ? 1 : b.versionNumber - a.versionNumber;

/**
 * ScenarioStore in memory, for fast service tests; held to the same contract as MySqlScenarioStore
 * (scenario-store-contract.ts). Owners are named by `addOwner` (the MySQL store reads `users`); a
 * scenario of an unknown owner is not found, as the store's join finds none.
 */
export class FakeScenarioStore implements ScenarioStore {
  private state: State = { scenarios: [], versions: [], testCases: [], ids: { scenario: 0, version: 0, testCase: 0 } };
  private readonly owners = new Map<number, string>();
  private readonly transactions = new FakeTransactions(
    () => copyOf(this.state),
    (state) => {
      this.state = state;
    },
  );

  addOwner(id: number, username: string): this {
    this.owners.set(id, username);
    return this;
  }

  transaction<T>(work: (trx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.transactions.run(work);
  }

  async findById(id: number): Promise<Scenarios.ScenarioRecord | undefined> {
    return this.toRecord(this.state.scenarios.find((s) => s.id === id));
  }

  async findByName(ownerId: number, name: string): Promise<Scenarios.ScenarioRecord | undefined> {
    return this.toRecord(this.state.scenarios.find((s) => s.ownerId === ownerId && s.name === name));
  }

  async listByOwner(ownerId: number): Promise<Scenarios.ScenarioRecord[]> {
    return this.state.scenarios
      .filter((s) => s.ownerId === ownerId)
      .sort(byName)
      .flatMap((s) => this.toRecord(s) ?? []);
  }

  async listPage(ownerId: number, limit: number, beforeId?: number): Promise<Scenarios.ScenarioListing[]> {
    return this.state.scenarios
      .filter((s) => s.ownerId === ownerId && (beforeId === undefined || s.id < beforeId))
      .sort((a, b) => b.id - a.id)
      .slice(0, limit)
      .flatMap((s) => {
        const record = this.toRecord(s);
        if (!record) return [];
        const deployed = this.versionsOf(s.id)
          .filter((v) => v.status === 'DEPLOYED')
          .map((v) => v.versionNumber ?? 0);
        return [
          {
            ...record,
            createdAt: new Date(s.createdAt),
            updatedAt: new Date(s.updatedAt),
            deployedVersion: deployed.length > 0 ? Math.max(...deployed) : null,
          },
        ];
      });
  }

  async lockById(_trx: StoreTransaction, id: number): Promise<LockedScenario | undefined> {
    const scenario = this.state.scenarios.find((s) => s.id === id);
    return scenario ? { id: scenario.id, nextVersion: scenario.nextVersion } : undefined;
  }

  async insertScenario(_trx: StoreTransaction, ownerId: number, name: string): Promise<number> {
    this.refuseTaken(ownerId, name);
    const id = ++this.state.ids.scenario;
    this.state.scenarios.push({ id, ownerId, name, nextVersion: 1, createdAt: new Date(), updatedAt: new Date() });
    return id;
  }

  async rename(_trx: StoreTransaction, id: number, newName: string): Promise<void> {
    const scenario = this.state.scenarios.find((s) => s.id === id);
    if (!scenario) return;
    if (scenario.name !== newName) this.refuseTaken(scenario.ownerId, newName);
    Object.assign(scenario, { name: newName, updatedAt: new Date() });
  }

  async touch(_trx: StoreTransaction, id: number): Promise<void> {
    const scenario = this.state.scenarios.find((s) => s.id === id);
    if (scenario) scenario.updatedAt = new Date();
  }

  async findOpenedVersion(scenarioId: number): Promise<Scenarios.VersionRecord | undefined> {
    return copy(this.versionsOf(scenarioId).sort(openedFirst)[0]);
  }

  async findDevelopVersion(scenarioId: number): Promise<Scenarios.VersionRecord | undefined> {
    return copy(this.versionsOf(scenarioId).find((v) => v.status === 'DEVELOP'));
  }

  async findLatestDeployed(scenarioId: number): Promise<Scenarios.VersionRecord | undefined> {
    return copy(
      this.versionsOf(scenarioId)
        .filter((v) => v.status === 'DEPLOYED')
        .sort(openedFirst)[0],
    );
  }

  async findDeployedVersion(scenarioId: number, versionNumber: number): Promise<Scenarios.VersionRecord | undefined> {
    return copy(this.versionsOf(scenarioId).find((v) => v.status === 'DEPLOYED' && v.versionNumber === versionNumber));
  }

  async findLatestDeployedByName(
    ownerId: number,
    name: string,
  ): Promise<{ scenarioId: number; ownerName: string; version: Scenarios.VersionRecord | null } | undefined> {
    const scenario = await this.findByName(ownerId, name);
    if (!scenario) return undefined;
    return {
      scenarioId: scenario.id,
      ownerName: scenario.ownerName,
      version: (await this.findLatestDeployed(scenario.id)) ?? null,
    };
  }

  async listVersions(scenarioId: number): Promise<Omit<Scenarios.VersionRecord, 'content' | 'nodeProperties'>[]> {
    return this.versionsOf(scenarioId)
      .sort(openedFirst)
      .map(({ content: _content, nodeProperties: _nodeProperties, ...rest }) => copyOf(rest));
  }

  async putDevelopVersion(
    _trx: StoreTransaction,
    scenarioId: number,
    version: Scenarios.VersionContent,
    sourceVersion: string,
  ): Promise<number> {
    const values = {
      content: version.content,
      nodeProperties: version.nodeProperties,
      description: version.description,
      sourceVersion,
      createdAt: new Date(),
    };
    const existing = this.versionsOf(scenarioId).find((v) => v.status === 'DEVELOP');
    if (existing) {
      Object.assign(existing, values);
      return existing.id;
    }
    const id = ++this.state.ids.version;
    this.state.versions.push({ ...values, id, scenarioId, status: 'DEVELOP', versionNumber: null, replayId: null });
    return id;
  }

  async insertDeployedVersion(
    _trx: StoreTransaction,
    scenario: LockedScenario,
    version: Scenarios.VersionContent,
    sourceVersion: string,
    replayId?: string,
  ): Promise<{ id: number; versionNumber: number }> {
    const versionNumber = scenario.nextVersion;
    if (this.versionsOf(scenario.id).some((v) => v.versionNumber === versionNumber))
      throw duplicateKeyError(`${scenario.id}-${versionNumber}`);
    const id = ++this.state.ids.version;
    this.state.versions.push({
      id,
      scenarioId: scenario.id,
      status: 'DEPLOYED',
      versionNumber,
      sourceVersion,
      description: version.description,
      content: version.content,
      nodeProperties: version.nodeProperties,
      createdAt: new Date(),
      replayId: replayId ?? null,
    });
    const stored = this.state.scenarios.find((s) => s.id === scenario.id);
    if (stored) Object.assign(stored, { nextVersion: versionNumber + 1, updatedAt: new Date() });
    scenario.nextVersion = versionNumber + 1;
    return { id, versionNumber };
  }

  async listTestCases(scenarioId: number): Promise<Scenarios.TestCaseRecord[]> {
    return this.state.testCases
      .filter((t) => t.scenarioId === scenarioId)
      .sort((a, b) => a.position - b.position || a.id - b.id)
      .map(testCaseRecord);
  }

  async findTestCase(id: number): Promise<Scenarios.TestCaseRecord | undefined> {
    const found = this.state.testCases.find((t) => t.id === id);
    return found ? testCaseRecord(found) : undefined;
  }

  async replaceTestCases(
    _trx: StoreTransaction,
    scenarioId: number,
    testCases: Scenarios.NewTestCase[],
  ): Promise<void> {
    this.state.testCases = this.state.testCases.filter((t) => t.scenarioId !== scenarioId);
    testCases.forEach((testCase, position) => {
      this.state.testCases.push({ ...stored(testCase), id: ++this.state.ids.testCase, scenarioId, position });
    });
  }

  async updateTestCase(_trx: StoreTransaction, id: number, testCase: Scenarios.NewTestCase): Promise<void> {
    const found = this.state.testCases.find((t) => t.id === id);
    if (found) Object.assign(found, stored(testCase));
  }

  private versionsOf(scenarioId: number): Scenarios.VersionRecord[] {
    return this.state.versions.filter((v) => v.scenarioId === scenarioId);
  }

  private refuseTaken(ownerId: number, name: string): void {
    if (this.state.scenarios.some((s) => s.ownerId === ownerId && s.name === name))
      throw duplicateKeyError(`${ownerId}-${name}`);
  }

  private toRecord(scenario: StoredScenario | undefined): Scenarios.ScenarioRecord | undefined {
    const ownerName = scenario && this.owners.get(scenario.ownerId);
    return scenario && ownerName !== undefined
      ? { id: scenario.id, ownerId: scenario.ownerId, ownerName, name: scenario.name }
      : undefined;
  }
}

function copy(version: Scenarios.VersionRecord | undefined): Scenarios.VersionRecord | undefined {
  return version && copyOf(version);
}

/** A test case as its columns hold it: variables as JSON text (what JSON drops is gone), `ignore` a boolean. */
function stored(testCase: Scenarios.NewTestCase): Scenarios.NewTestCase {
  return {
    name: testCase.name,
    variables: JSON.parse(JSON.stringify(testCase.variables)) as Scenarios.NewTestCase['variables'],
    expression: testCase.expression,
    ignore: Boolean(testCase.ignore),
  };
}

function testCaseRecord({ position: _position, ...record }: StoredTestCase): Scenarios.TestCaseRecord {
  return copyOf(record);
}
