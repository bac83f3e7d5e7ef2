import type { StoreTransaction } from '../db/store-transaction.js';
import type {
  NewTestCase,
  ScenarioListing,
  ScenarioRecord,
  TestCaseRecord,
  VersionContent,
  VersionRecord,
} from './scenario-types.js';

/** A scenario locked for the rest of a transaction, with the number its next deployed version gets. */
export interface LockedScenario {
  id: number;
  nextVersion: number;
}

/**
 * What scenario management stores: scenarios (one name per owner), their versions (at most one
 * development version, deployed versions numbered from 1 and never reused) and test cases. Implemented
 * over MySQL by MySqlScenarioStore (scenario-store.ts); tests run one contract suite on it and on an
 * in-memory fake (test/scenarios/support/), so service tests on the fake mean something.
 *
 * Writes take the transaction `transaction(work)` began; the service decides its boundaries. A
 * transaction whose work throws leaves nothing written.
 */
export interface ScenarioStore {
  transaction<T>(work: (trx: StoreTransaction) => Promise<T>): Promise<T>;

  findById(id: number, trx?: StoreTransaction): Promise<ScenarioRecord | undefined>;
  findByName(ownerId: number, name: string, trx?: StoreTransaction): Promise<ScenarioRecord | undefined>;
  /** The owner's scenarios by name. */
  listByOwner(ownerId: number): Promise<ScenarioRecord[]>;
  /**
   * A page of the owner's scenarios, newest first (by id: ids are issued in creation order), each with its latest
   * deployed version number (null when none); `beforeId` continues after the previous page's last scenario.
   */
  listPage(ownerId: number, limit: number, beforeId?: number): Promise<ScenarioListing[]>;
  /** Locks the scenario for the rest of the transaction: deploys and imports of one scenario run one at a time. */
  lockById(trx: StoreTransaction, id: number): Promise<LockedScenario | undefined>;
  /** Adds a scenario; a name the owner already has fails with an error `isDuplicateKey` (src/db/mysql-errors.ts) recognises. */
  insertScenario(trx: StoreTransaction, ownerId: number, name: string): Promise<number>;
  /** Renames; a name the owner already has fails as insertScenario does. */
  rename(trx: StoreTransaction, id: number, newName: string): Promise<void>;
  /** Marks the scenario as changed now. */
  touch(trx: StoreTransaction, id: number): Promise<void>;

  /** The version `open` shows: the development version if any, else the latest deployed. */
  findOpenedVersion(scenarioId: number, trx?: StoreTransaction): Promise<VersionRecord | undefined>;
  findDevelopVersion(scenarioId: number): Promise<VersionRecord | undefined>;
  findLatestDeployed(scenarioId: number): Promise<VersionRecord | undefined>;
  findDeployedVersion(scenarioId: number, versionNumber: number): Promise<VersionRecord | undefined>;
  /**
   * The owner's scenario of that name with its latest deployed version: undefined when there is no
   * such scenario, `version: null` when it was never deployed.
   */
  findLatestDeployedByName(
    ownerId: number,
    name: string,
  ): Promise<{ scenarioId: number; ownerName: string; version: VersionRecord | null } | undefined>;
  /** Every version without content, develop first, then deployed by descending number. */
  listVersions(scenarioId: number): Promise<Omit<VersionRecord, 'content' | 'nodeProperties'>[]>;
  /** Creates or replaces the development version (replaced in place: it keeps its id). */
  putDevelopVersion(
    trx: StoreTransaction,
    scenarioId: number,
    version: VersionContent,
    sourceVersion: string,
  ): Promise<number>;
  /**
   * Adds deployed version `scenario.nextVersion` (read under the lock by lockById) and advances the
   * scenario's counter (in `scenario` too), so concurrent deploys get consecutive numbers. `replayId`:
   * the replay it was tested with.
   */
  insertDeployedVersion(
    trx: StoreTransaction,
    scenario: LockedScenario,
    version: VersionContent,
    sourceVersion: string,
    replayId?: string,
  ): Promise<{ id: number; versionNumber: number }>;

  /** The scenario's test cases in the order they were written. */
  listTestCases(scenarioId: number): Promise<TestCaseRecord[]>;
  findTestCase(id: number): Promise<TestCaseRecord | undefined>;
  /** Replaces every test case of the scenario, in this order. */
  replaceTestCases(trx: StoreTransaction, scenarioId: number, testCases: NewTestCase[]): Promise<void>;
  updateTestCase(trx: StoreTransaction, id: number, testCase: NewTestCase): Promise<void>;
}

/** The lock of a scenario's row, for features that serialise their own writes per scenario (shadows, splits). */
export type ScenarioLocks = Pick<ScenarioStore, 'lockById'>;
