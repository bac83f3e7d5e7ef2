import type { Knex } from 'knex';
import { knexOf, storeTransactionOf, type StoreTransaction } from '../db/store-transaction.js';
import type { OwnerNames } from '../auth/owner-ports.js';
import type { LockedScenario, ScenarioStore } from './scenario-store-type.js';
import type {
  NewTestCase,
  ScenarioListing,
  ScenarioRecord,
  TestCaseRecord,
  TestCaseVariable,
  VersionContent,
  VersionRecord,
  VersionStatus,
} from './scenario-types.js';
import { camelCased } from '../db/row-fields.js';

interface ScenarioRow {
  id: number;
  owner_id: number;
  name: string;
}

interface VersionRow {
  id: number;
  scenario_id: number;
  status: VersionStatus;
  version_number: number | null;
  source_version: string | null;
  description: string;
  content: string;
  node_properties: string;
  created_at: Date | string;
  replay_id?: string | null;
}

interface TestCaseRow {
  id: number;
  scenario_id: number;
  name: string;
  variables: string;
  expression: string;
  ignore: number | boolean;
}

const SCENARIO_COLUMNS = ['s.id', 's.owner_id', 's.name'];

/** The columns a version listing and a version read both map as they are (a read adds the content, a listing the dates). */
const VERSION_HEAD_COLUMNS = [
  'id',
  'scenario_id',
  'status',
  'version_number',
  'source_version',
  'description',
] as const satisfies ReadonlyArray<keyof VersionRow>;

function toScenario(row: ScenarioRow, ownerName: string): ScenarioRecord {
  return { id: row.id, ownerId: row.owner_id, ownerName, name: row.name };
}

function toVersion(row: VersionRow): VersionRecord {
  return {
    ...camelCased(row, [...VERSION_HEAD_COLUMNS, 'content', 'node_properties']),
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
    replayId: row.replay_id ?? null,
  };
}

function toTestCase(row: TestCaseRow): TestCaseRecord {
  return {
    id: row.id,
    scenarioId: row.scenario_id,
    name: row.name,
    variables: JSON.parse(row.variables) as TestCaseVariable[],
    expression: row.expression,
    ignore: Boolean(row.ignore),
  };
}

/**
 * Knex queries over scenarios, scenario_versions and scenario_test_cases (the ScenarioStore contract:
 * scenario-store-type.ts). The service decides transaction boundaries.
 */
export class MySqlScenarioStore implements ScenarioStore {
  constructor(
    private readonly db: Knex,
    private readonly owners: OwnerNames,
  ) {}

  /** The rows with their owners' usernames (auth's OwnerNames, in `trx` when given); a row whose owner is no user is left out. */
  private async withOwners<Row extends ScenarioRow>(
    rows: Row[],
    trx?: StoreTransaction,
  ): Promise<Array<{ row: Row; scenario: ScenarioRecord }>> {
    const names = await this.owners.usernamesOf(
      rows.map((row) => row.owner_id),
      trx,
    );
    return rows.flatMap((row) => {
      const ownerName = names.get(row.owner_id);
      return ownerName === undefined ? [] : [{ row, scenario: toScenario(row, ownerName) }];
    });
  }

  private async oneWithOwner(
    row: ScenarioRow | undefined,
    trx?: StoreTransaction,
  ): Promise<ScenarioRecord | undefined> {
    return row ? (await this.withOwners([row], trx))[0]?.scenario : undefined;
  }

  transaction<T>(work: (trx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction((trx) => work(storeTransactionOf(trx)));
  }

  /** The transaction's connection, or the pool's. */
  private on(trx?: StoreTransaction): Knex {
    return trx ? knexOf(trx) : this.db;
  }

  async findById(id: number, transaction?: StoreTransaction): Promise<ScenarioRecord | undefined> {
    const trx = this.on(transaction);
    const row = (await trx('scenarios as s').where('s.id', id).first(SCENARIO_COLUMNS)) as ScenarioRow | undefined;
    return this.oneWithOwner(row, transaction);
  }

  async findByName(ownerId: number, name: string, transaction?: StoreTransaction): Promise<ScenarioRecord | undefined> {
    const trx = this.on(transaction);
    const row = (await trx('scenarios as s')
      .where({ 's.owner_id': ownerId, 's.name': name })
      .first(SCENARIO_COLUMNS)) as ScenarioRow | undefined;
    return this.oneWithOwner(row, transaction);
  }

  async listByOwner(ownerId: number): Promise<ScenarioRecord[]> {
    const rows = (await this.db('scenarios as s')
      .where('s.owner_id', ownerId)
      .orderBy('s.name')
      .select(SCENARIO_COLUMNS)) as ScenarioRow[];
    return (await this.withOwners(rows)).map(({ scenario }) => scenario);
  }

  /**
   * A page of the owner's scenarios, newest first (by id: ids are issued in creation order), with each one's latest
   * deployed version number; `beforeId` continues after the previous page's last scenario.
   */
  async listPage(ownerId: number, limit: number, beforeId?: number): Promise<ScenarioListing[]> {
    const latestDeployed = this.db('scenario_versions as v')
      .max('v.version_number')
      .where('v.scenario_id', this.db.ref('s.id'))
      .andWhere('v.status', 'DEPLOYED');
    const query = this.db('scenarios as s')
      .where('s.owner_id', ownerId)
      .orderBy('s.id', 'desc')
      .limit(limit)
      .select([...SCENARIO_COLUMNS, 's.created_at', 's.updated_at', latestDeployed.as('deployed_version')]);
    if (beforeId !== undefined) query.andWhere('s.id', '<', beforeId);
    const rows = (await query) as Array<
      ScenarioRow & { created_at: Date | string; updated_at: Date | string; deployed_version: number | null }
    >;
    return (await this.withOwners(rows)).map(({ row, scenario }) => ({
      ...scenario,
      createdAt: new Date(row.created_at),
      updatedAt: new Date(row.updated_at),
      deployedVersion: row.deployed_version === null ? null : Number(row.deployed_version),
    }));
  }

  async lockById(transaction: StoreTransaction, id: number): Promise<LockedScenario | undefined> {
    const trx = this.on(transaction);
    const row = (await trx('scenarios').where({ id }).forUpdate().first('id', 'next_version')) as
      | { id: number; next_version: number }
      | undefined;
    return row ? { id: row.id, nextVersion: row.next_version } : undefined;
  }

  /** Inserts a scenario; a name the owner already has fails with a duplicate-key error (see isDuplicateKey in src/db/mysql-errors.ts). */
  async insertScenario(transaction: StoreTransaction, ownerId: number, name: string): Promise<number> {
    const trx = this.on(transaction);
    const [id] = await trx('scenarios').insert({ owner_id: ownerId, name });
    return id;
  }

  async rename(transaction: StoreTransaction, id: number, newName: string): Promise<void> {
    const trx = this.on(transaction);
    await trx('scenarios')
      .where({ id })
      .update({ name: newName, updated_at: trx.fn.now(3) });
  }

  async touch(transaction: StoreTransaction, id: number): Promise<void> {
    const trx = this.on(transaction);
    await trx('scenarios')
      .where({ id })
      .update({ updated_at: trx.fn.now(3) });
  }

  /** The version `open` shows: the development version if any, else the latest deployed. */
  async findOpenedVersion(scenarioId: number, transaction?: StoreTransaction): Promise<VersionRecord | undefined> {
    const trx = this.on(transaction);
    const row = (await trx('scenario_versions')
      .where({ scenario_id: scenarioId })
      // develop (NULL number) first, then the highest number
      .orderByRaw('version_number IS NOT NULL, version_number DESC')
      .first()) as VersionRow | undefined;
    return row ? toVersion(row) : undefined;
  }

  async findDevelopVersion(scenarioId: number, transaction?: StoreTransaction): Promise<VersionRecord | undefined> {
    const trx = this.on(transaction);
    const row = (await trx('scenario_versions').where({ scenario_id: scenarioId, status: 'DEVELOP' }).first()) as
      | VersionRow
      | undefined;
    return row ? toVersion(row) : undefined;
  }

  async findLatestDeployed(scenarioId: number, transaction?: StoreTransaction): Promise<VersionRecord | undefined> {
    const trx = this.on(transaction);
    const row = (await trx('scenario_versions')
      .where({ scenario_id: scenarioId, status: 'DEPLOYED' })
      .orderBy('version_number', 'desc')
      .first()) as VersionRow | undefined;
    return row ? toVersion(row) : undefined;
  }

  async findDeployedVersion(
    scenarioId: number,
    versionNumber: number,
    transaction?: StoreTransaction,
  ): Promise<VersionRecord | undefined> {
    const trx = this.on(transaction);
    const row = (await trx('scenario_versions')
      .where({ scenario_id: scenarioId, status: 'DEPLOYED', version_number: versionNumber })
      .first()) as VersionRow | undefined;
    return row ? toVersion(row) : undefined;
  }

  /**
   * The owner's scenario of that name with its latest deployed version, in one query: undefined
   * when there is no such scenario, `version: null` when it was never deployed.
   */
  async findLatestDeployedByName(
    ownerId: number,
    name: string,
  ): Promise<{ scenarioId: number; ownerName: string; version: VersionRecord | null } | undefined> {
    const row = (await this.db('scenarios as s')
      .leftJoin('scenario_versions as v', (join) => join.on('v.scenario_id', 's.id').andOnVal('v.status', 'DEPLOYED'))
      .where({ 's.owner_id': ownerId, 's.name': name })
      .orderBy('v.version_number', 'desc')
      .first('s.id as owner_scenario_id', 'v.*')) as
      | (VersionRow & { owner_scenario_id: number; id: number | null })
      | undefined;
    if (!row) return undefined;
    const ownerName = (await this.owners.usernamesOf([ownerId])).get(ownerId);
    if (ownerName === undefined) return undefined;
    return {
      scenarioId: row.owner_scenario_id,
      ownerName,
      version: row.id === null ? null : toVersion(row as VersionRow),
    };
  }

  /** Every version without content, develop first, then deployed by descending number. */
  async listVersions(scenarioId: number): Promise<Omit<VersionRecord, 'content' | 'nodeProperties'>[]> {
    const rows = (await this.db('scenario_versions')
      .where({ scenario_id: scenarioId })
      .orderByRaw('version_number IS NOT NULL, version_number DESC')
      .select(...VERSION_HEAD_COLUMNS, 'created_at', 'replay_id')) as VersionRow[];
    return rows.map((row) => {
      const {
        content: _content,
        nodeProperties: _nodeProperties,
        ...rest
      } = toVersion({ ...row, content: '', node_properties: '' });
      return rest;
    });
  }

  /** Creates or replaces the development version (one row per scenario, replaced in place). */
  async putDevelopVersion(
    transaction: StoreTransaction,
    scenarioId: number,
    version: VersionContent,
    sourceVersion: string,
  ): Promise<number> {
    const trx = this.on(transaction);
    const existing = (await trx('scenario_versions')
      .where({ scenario_id: scenarioId, status: 'DEVELOP' })
      .first('id')) as { id: number } | undefined;
    const values = {
      content: version.content,
      node_properties: version.nodeProperties,
      description: version.description,
      source_version: sourceVersion,
    };
    if (existing) {
      await trx('scenario_versions')
        .where({ id: existing.id })
        .update({ ...values, created_at: trx.fn.now(3) });
      return existing.id;
    }
    const [id] = await trx('scenario_versions').insert({
      ...values,
      scenario_id: scenarioId,
      status: 'DEVELOP',
      version_number: null,
    });
    return id;
  }

  /**
   * Adds deployed version `nextVersion` (read under the row lock by lockById/lockByName) and bumps
   * the scenario's counter, so concurrent deploys get consecutive numbers. `replayId`: the replay it
   * was tested with (deploy's `replay` reference).
   */
  async insertDeployedVersion(
    transaction: StoreTransaction,
    scenario: LockedScenario,
    version: VersionContent,
    sourceVersion: string,
    replayId?: string,
  ): Promise<{ id: number; versionNumber: number }> {
    const trx = this.on(transaction);
    const versionNumber = scenario.nextVersion;
    const [id] = await trx('scenario_versions').insert({
      scenario_id: scenario.id,
      status: 'DEPLOYED',
      version_number: versionNumber,
      source_version: sourceVersion,
      description: version.description,
      content: version.content,
      node_properties: version.nodeProperties,
      replay_id: replayId ?? null,
    });
    await trx('scenarios')
      .where({ id: scenario.id })
      .update({ next_version: versionNumber + 1, updated_at: trx.fn.now(3) });
    scenario.nextVersion = versionNumber + 1;
    return { id, versionNumber };
  }

  async listTestCases(scenarioId: number, transaction?: StoreTransaction): Promise<TestCaseRecord[]> {
    const trx = this.on(transaction);
    const rows = (await trx('scenario_test_cases')
      .where({ scenario_id: scenarioId })
      .orderBy(['position', 'id'])) as TestCaseRow[];
    return rows.map(toTestCase);
  }

  async findTestCase(id: number, transaction?: StoreTransaction): Promise<TestCaseRecord | undefined> {
    const trx = this.on(transaction);
    const row = (await trx('scenario_test_cases').where({ id }).first()) as TestCaseRow | undefined;
    return row ? toTestCase(row) : undefined;
  }

  async replaceTestCases(transaction: StoreTransaction, scenarioId: number, testCases: NewTestCase[]): Promise<void> {
    const trx = this.on(transaction);
    await trx('scenario_test_cases').where({ scenario_id: scenarioId }).delete();
    if (testCases.length === 0) return;
    await trx('scenario_test_cases').insert(
      testCases.map((testCase, position) => ({
        scenario_id: scenarioId,
        name: testCase.name,
        variables: JSON.stringify(testCase.variables),
        expression: testCase.expression,
        ignore: testCase.ignore,
        position,
      })),
    );
  }

  async updateTestCase(transaction: StoreTransaction, id: number, testCase: NewTestCase): Promise<void> {
    const trx = this.on(transaction);
    await trx('scenario_test_cases')
      .where({ id })
      .update({
        name: testCase.name,
        variables: JSON.stringify(testCase.variables),
        expression: testCase.expression,
        ignore: testCase.ignore,
      });
  }
}
