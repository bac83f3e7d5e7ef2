import {
  InputValidationError,
  ScenarioCompileError,
  ScenarioRunError,
  inputVariables,
  type CompiledScenario,
  type Diagnostic,
  type ScenarioDocument,
  type ScenarioEngine,
  type TestCaseSpec,
} from '../engine/index.js';
import type { ErrorDetail } from '../errors/app-error.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { ConflictError } from '../errors/conflict-error.js';
import { ForbiddenError } from '../errors/forbidden-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { UnprocessableError } from '../errors/unprocessable-error.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import type { DeployedScenarioResolver } from './deployed-scenario-resolver.js';
import { deployedCacheKey } from './deployed-scenarios.js';
import { invalidScenario, prepareImport, type PreparedImport } from './import-document.js';
import { retryOnDeadlock } from '../db/deadlock-retry.js';
import { isDuplicateKey } from '../db/mysql-errors.js';
import type { StoreTransaction } from '../db/store-transaction.js';
import { parseRecordId } from '../db/record-id.js';
import type { ReplayReferences } from './replay-references.js';
import type { ScenarioAccess, ScenarioActor } from './scenario-access.js';
import type { ScenarioStore } from './scenario-store-type.js';
import { decodeScenarioCursor, encodeScenarioCursor } from './scenario-cursor.js';
import type { ScenarioVersions, VersionSnapshot } from './scenario-versions.js';
import { NO_DEPLOY_LISTENER, type DeployListener } from './deploy-listener.js';
import { assertTestCaseCount } from './test-case-cap.js';
import { storedTestCaseVariables } from './test-case-variables.js';
import { contentCacheKey, contentHash } from './version-content.js';
import {
  DEVELOP_LABEL,
  documentOf,
  labelOf,
  type DebugResultDto,
  type ImportOutcomeDto,
  type ScenarioImportDto,
  type ScenarioPageDto,
  type ScenarioRecord,
  type ScenarioSummaryDto,
  type NewTestCase,
  type ScenarioTestCaseDto,
  type ScenarioTestCaseSaveDto,
  type ScenarioVersionDto,
  type ScenarioVersionPreviewDto,
  type TestCaseRecord,
  type VariableInfoMapDto,
  type VersionRecord,
} from './scenario-types.js';

export type { ScenarioActor };

/** Scenarios per page of listScenarios when the request names no `limit` (the spec's default). */
const DEFAULT_PAGE_SIZE = 20;

export interface ImportSwitches {
  overwriteDevelop: boolean;
  overwriteDeploy: boolean;
}

/**
 * What an imported scenario's checks found: whether it compiles, and what keeps it from being
 * deployed (compile diagnostics; with overwrite_deploy, every problem deployScenario would find).
 */
interface ImportCheck {
  compiles: boolean;
  diagnostics: Diagnostic[];
}

/** Scenario management: versions, import/export, copy/rename, validation, debugging and deployment. */
export class ScenarioService implements ScenarioAccess, ScenarioVersions {
  constructor(
    private readonly store: ScenarioStore,
    private readonly engine: ScenarioEngine,
    private readonly deployed: DeployedScenarioResolver,
    /** Checks deploy's `replay` references (the replay feature); without it every reference is unknown. */
    private readonly replays: ReplayReferences = NO_REPLAYS,
    /** Resolves the models of MODEL nodes before anything is compiled (the engine does no I/O). */
    private readonly models: ModelDocuments = NO_MODELS,
    /** Told of every deploy once it is committed (live tests end the shadows of the replaced champion). */
    private readonly deployListener: DeployListener = NO_DEPLOY_LISTENER,
  ) {}

  /**
   * The resolved owner's scenarios (the `context` decides whose: the token's user, or for admins anyone), newest
   * first, a page at a time (`cursor`: the previous page's nextCursor).
   */
  async list(actor: ScenarioActor, cursor: string | undefined, limit = DEFAULT_PAGE_SIZE): Promise<ScenarioPageDto> {
    const before = cursor === undefined ? undefined : decodeScenarioCursor(cursor);
    // One more than the page: whether there is a next page, without a count.
    const scenarios = await this.store.listPage(actor.owner.id, limit + 1, before);
    const page = scenarios.slice(0, limit);
    return {
      scenarios: page.map((scenario) => ({
        id: String(scenario.id),
        name: scenario.name,
        owner: scenario.ownerName,
        createdAt: scenario.createdAt.toISOString(),
        updatedAt: scenario.updatedAt.toISOString(),
        deployedVersion: scenario.deployedVersion === null ? null : String(scenario.deployedVersion),
      })),
      nextCursor: scenarios.length > limit ? encodeScenarioCursor(page[page.length - 1].id) : null,
    };
  }

  async open(actor: ScenarioActor, id: string): Promise<ScenarioVersionDto> {
    const scenario = await this.accessible(actor, id);
    return this.versionDto(scenario, await this.openedVersion(scenario), await this.store.listTestCases(scenario.id));
  }

  async listVersions(actor: ScenarioActor, id: string): Promise<ScenarioVersionPreviewDto[]> {
    const scenario = await this.accessible(actor, id);
    const versions = await this.store.listVersions(scenario.id);
    return versions.map((version) => ({
      ...versionFields(scenario, version),
      ...(version.replayId === null ? {} : { replayId: version.replayId }),
    }));
  }

  async snapshot(scenarioId: number, label: string): Promise<VersionSnapshot | undefined> {
    const version =
      label === DEVELOP_LABEL
        ? await this.store.findDevelopVersion(scenarioId)
        : await this.store.findDeployedVersion(scenarioId, Number(label));
    return version ? snapshotOf(version) : undefined;
  }

  async latestDeployed(scenarioId: number): Promise<VersionSnapshot | undefined> {
    const version = await this.store.findLatestDeployed(scenarioId);
    return version ? snapshotOf(version) : undefined;
  }

  async inputs(actor: ScenarioActor, id: string): Promise<VariableInfoMapDto> {
    const scenario = await this.accessible(actor, id);
    const map: VariableInfoMapDto = {};
    for (const variable of inputVariables(documentOf(await this.openedVersion(scenario)))) {
      if (!Object.hasOwn(map, variable.name)) map[variable.name] = variable as VariableInfoMapDto[string];
    }
    return map;
  }

  async inputNames(actor: ScenarioActor, id: string): Promise<string[]> {
    return Object.keys(await this.inputs(actor, id));
  }

  /** New scenario of the source's owner whose development version copies the source's opened version and test cases. */
  async copy(actor: ScenarioActor, id: string, newName: string): Promise<ScenarioVersionDto> {
    const source = await this.accessible(actor, id);
    const version = await this.openedVersion(source);
    const testCases = await this.store.listTestCases(source.id);
    const copyId = await this.write(async (trx) => {
      const scenarioId = await this.insertScenario(trx, source.ownerId, newName);
      await this.store.putDevelopVersion(trx, scenarioId, version, 'copy');
      await this.store.replaceTestCases(trx, scenarioId, testCases);
      return scenarioId;
    });
    const copy = (await this.store.findById(copyId)) as ScenarioRecord;
    return this.versionDto(copy, await this.openedVersion(copy), await this.store.listTestCases(copyId));
  }

  async rename(actor: ScenarioActor, currentName: string, newName: string): Promise<ScenarioSummaryDto> {
    const scenario = await this.store.findByName(actor.owner.id, currentName);
    if (!scenario) throw scenarioNotFound(`You have no scenario named "${currentName}".`);
    if (newName !== currentName) {
      await this.write(async (trx) => {
        try {
          await this.store.rename(trx, scenario.id, newName);
        } catch (error) {
          if (isDuplicateKey(error)) throw nameTaken(newName);
          throw error;
        }
      });
      this.deployed.invalidate(scenario.ownerId, currentName);
      this.deployed.invalidate(scenario.ownerId, newName);
    }
    return { id: String(scenario.id), name: newName, owner: scenario.ownerName };
  }

  async debug(actor: ScenarioActor, id: string, inputs: Record<string, unknown>): Promise<DebugResultDto> {
    const scenario = await this.accessible(actor, id);
    const version = await this.openedVersion(scenario);
    const { document, cacheKey } = await this.models.resolve(
      scenario.ownerId,
      documentOf(version),
      cacheKeyOf(version),
    );
    const compiled = this.engine.compile(cacheKey, document);
    const outcome = await this.engine.run(compiled, inputs, { ownerId: scenario.ownerId, trace: true });
    return {
      version: labelOf(version),
      result: outcome.result,
      trace: (outcome.trace ?? []) as DebugResultDto['trace'],
    };
  }

  /** Throws 422 VALIDATION_ERRORS listing every problem of the opened version; returns when it is valid. */
  async validate(actor: ScenarioActor, id: string, validationData?: Record<string, unknown>): Promise<void> {
    const scenario = await this.accessible(actor, id);
    const version = await this.openedVersion(scenario);
    const problems = await this.problemsOf(scenario, version, validationData);
    if (problems.length > 0) throw validationErrors(scenario, labelOf(version), problems);
  }

  /**
   * Deploys the development version as the next numbered version (validated first, with the
   * optional validation data run once, unless `skipValidation`; it must compile either way), with
   * the `replay` it was tested with when given (checked by ReplayReferences). Returns the new label.
   */
  async deploy(
    actor: ScenarioActor,
    id: string,
    options: { skipValidation?: boolean; validationData?: Record<string, unknown>; replay?: string } = {},
  ): Promise<string> {
    const scenario = await this.accessible(actor, id);
    const develop = await this.store.findDevelopVersion(scenario.id);
    if (!develop) {
      throw new ConflictError(
        `Scenario "${scenario.name}" has no development version to deploy.`,
        'NO_DEVELOP_VERSION',
      );
    }
    if (options.skipValidation) {
      const { document, cacheKey } = await this.models.resolve(
        scenario.ownerId,
        documentOf(develop),
        cacheKeyOf(develop),
      );
      this.engine.compile(cacheKey, document);
    } else {
      const problems = await this.problemsOf(scenario, develop, options.validationData);
      if (problems.length > 0) throw validationErrors(scenario, labelOf(develop), problems);
    }
    const replayId = options.replay;
    if (replayId !== undefined)
      await this.replays.requireTested(scenario, replayId, contentHash(develop.content, develop.nodeProperties));
    // Deploys exactly the content that was validated, even if the develop version changes meanwhile.
    const { label, name } = await this.write(async (trx) => {
      const locked = await this.store.lockById(trx, scenario.id);
      if (!locked) throw scenarioNotFound(`Scenario ${scenario.id} no longer exists.`);
      const created = await this.store.insertDeployedVersion(trx, locked, develop, 'develop', replayId);
      const current = (await this.store.findById(scenario.id, trx)) as ScenarioRecord;
      return { label: String(created.versionNumber), name: current.name };
    });
    this.deployed.invalidate(scenario.ownerId, name);
    await this.deployListener.deployed(scenario, label);
    return label;
  }

  /**
   * Deploys `document` (a challenger of a champion/challenger split, as the split ran it) as the next
   * numbered version, `sourceVersion` naming where it came from in the version history. It compiled
   * when the split started and ran on live traffic since: not validated again. Deploy listeners are told.
   */
  async deployDocument(
    scenario: { id: number; ownerId: number; name: string },
    document: ScenarioDocument,
    sourceVersion: string,
    description: string,
  ): Promise<string> {
    const version = { content: document.content, nodeProperties: JSON.stringify(document.nodeProperties), description };
    const { label, name } = await this.write(async (trx) => {
      const locked = await this.store.lockById(trx, scenario.id);
      if (!locked) throw scenarioNotFound(`Scenario ${scenario.id} no longer exists.`);
      const created = await this.store.insertDeployedVersion(trx, locked, version, sourceVersion);
      const current = (await this.store.findById(scenario.id, trx)) as ScenarioRecord;
      return { label: String(created.versionNumber), name: current.name };
    });
    this.deployed.invalidate(scenario.ownerId, name);
    await this.deployListener.deployed(scenario, label);
    return label;
  }

  /** Whether the latest deployed version has the development version's content (false when either is missing). */
  async deployedMatchesDevelop(actor: ScenarioActor, id: string): Promise<boolean> {
    const scenario = await this.accessible(actor, id);
    const [develop, latest] = await Promise.all([
      this.store.findDevelopVersion(scenario.id),
      this.store.findLatestDeployed(scenario.id),
    ]);
    return (
      !!develop && !!latest && develop.content === latest.content && develop.nodeProperties === latest.nodeProperties
    );
  }

  /** All-or-nothing import of one or more scenarios into the actor's owner; outcomes in input order. */
  async importScenarios(
    actor: ScenarioActor,
    body: ScenarioImportDto | ScenarioImportDto[],
    switches: ImportSwitches,
  ): Promise<ImportOutcomeDto[]> {
    const { prepared, problems } = prepareImport(body);
    if (problems.length > 0) throw invalidScenario(problems);
    for (const item of prepared)
      assertTestCaseCount(item.name, item.testCases.length, `scenarios[${item.index}].testCases`);
    const ownerId = actor.owner.id;
    // Import-deploy passes deploy's validation (compiles, references resolve, test cases pass); it
    // runs scenario code, so it happens before the transaction takes its locks.
    const checks = await Promise.all(
      prepared.map(async (item): Promise<ImportCheck> => {
        const compileProblems = await this.compileDiagnostics(ownerId, item.document);
        if (compileProblems.length > 0) return { compiles: false, diagnostics: compileProblems };
        return {
          compiles: true,
          diagnostics: switches.overwriteDeploy ? await this.importDeployProblems(ownerId, item, switches) : [],
        };
      }),
    );
    const importAll = () =>
      this.write(async (trx) => {
        const results: ImportOutcomeDto[] = [];
        for (const item of prepared)
          results.push(await this.importOne(trx, ownerId, item, checks[item.index], switches));
        return results;
      });
    let outcomes: ImportOutcomeDto[];
    try {
      outcomes = await importAll();
    } catch (error) {
      // A concurrent request created one of the names meanwhile: once more, now seeing it as existing.
      if (!(error instanceof ConflictError)) throw error;
      outcomes = await importAll();
    }
    for (const outcome of outcomes) if (outcome.version) this.deployed.invalidate(ownerId, outcome.name);
    return outcomes;
  }

  async exportScenarios(actor: ScenarioActor, name?: string): Promise<ScenarioVersionDto[]> {
    let scenarios: ScenarioRecord[];
    if (name !== undefined) {
      const found = await this.store.findByName(actor.owner.id, name);
      if (!found) throw scenarioNotFound(`You have no scenario named "${name}".`);
      scenarios = [found];
    } else {
      scenarios = await this.store.listByOwner(actor.owner.id);
    }
    const versions: ScenarioVersionDto[] = [];
    for (const scenario of scenarios) {
      versions.push(
        this.versionDto(scenario, await this.openedVersion(scenario), await this.store.listTestCases(scenario.id)),
      );
    }
    return versions;
  }

  async updateTestCase(
    actor: ScenarioActor,
    id: string,
    testCaseId: string,
    dto: ScenarioTestCaseSaveDto,
  ): Promise<ScenarioTestCaseDto> {
    const mismatches: ErrorDetail[] = [];
    if (dto.id !== undefined && String(dto.id) !== testCaseId)
      mismatches.push({ path: 'body.id', message: `must equal the test case id in the path (${testCaseId})` });
    if (dto.scenarioId !== undefined && dto.scenarioId !== id)
      mismatches.push({ path: 'body.scenarioId', message: `must equal the scenario id in the path (${id})` });
    if (mismatches.length > 0)
      throw new BadRequestError(
        `The body names another ${mismatches.map((m) => (m.path ?? '').slice(5)).join(' and ')} than the path.`,
        'VALIDATION_FAILED',
        mismatches,
      );
    const scenario = await this.accessible(actor, id);
    const recordId = parseRecordId(testCaseId);
    const existing = recordId === undefined ? undefined : await this.store.findTestCase(recordId);
    if (!existing || existing.scenarioId !== scenario.id) {
      throw new NotFoundError(`Scenario "${scenario.name}" has no test case ${testCaseId}.`, 'TEST_CASE_NOT_FOUND');
    }
    const saved = {
      name: dto.name,
      variables: storedTestCaseVariables(dto.variables),
      expression: dto.expression.code,
      ignore: dto.ignore ?? false,
    };
    await this.write(async (trx) => {
      await this.store.updateTestCase(trx, existing.id, saved);
      await this.store.touch(trx, scenario.id);
    });
    return testCaseDto({ ...saved, id: existing.id, scenarioId: scenario.id });
  }

  // ── rules shared by the operations ──

  /** The scenario with this id, when the actor may act on it: 404 when unknown (or not an id of ours), 403 when another owner's (unless admin). */
  async accessible(actor: ScenarioActor, id: string): Promise<ScenarioRecord> {
    const recordId = parseRecordId(id);
    const scenario = recordId === undefined ? undefined : await this.store.findById(recordId);
    if (!scenario) throw scenarioNotFound(`Scenario "${id}" does not exist.`);
    if (scenario.ownerId !== actor.owner.id && !actor.isAdmin) {
      throw new ForbiddenError(`Scenario ${id} belongs to another user.`, 'FORBIDDEN', [
        { path: 'path.id', message: `is not a scenario of "${actor.owner.username}"` },
      ]);
    }
    return scenario;
  }

  private async openedVersion(scenario: ScenarioRecord, trx?: StoreTransaction): Promise<VersionRecord> {
    const version = await this.store.findOpenedVersion(scenario.id, trx);
    if (!version) throw scenarioNotFound(`Scenario "${scenario.name}" has no version.`);
    return version;
  }

  /** Every problem of a stored version, with the scenario's stored test cases (what validate and deploy check). */
  private async problemsOf(
    scenario: ScenarioRecord,
    version: VersionRecord,
    validationData?: Record<string, unknown>,
  ): Promise<ErrorDetail[]> {
    const testCases = await this.store.listTestCases(scenario.id);
    assertTestCaseCount(scenario.name, testCases.length, 'testCases');
    return this.problemsOfDocument(
      scenario.ownerId,
      documentOf(version),
      cacheKeyOf(version),
      testCases,
      validationData,
    );
  }

  /** Every problem of a document: diagnostics (compile and external references), the validation data's run, failing test cases. */
  private async problemsOfDocument(
    ownerId: number,
    stored: ScenarioDocument,
    storedKey: string,
    testCases: Array<NewTestCase & { id?: number }>,
    validationData?: Record<string, unknown>,
  ): Promise<ErrorDetail[]> {
    const { document, cacheKey } = await this.models.resolve(ownerId, stored, storedKey);
    // the validation data's run and every test case share one time budget
    const context = { ownerId, shared: this.engine.testCasesBudget(), lane: 'validation' as const };
    const problems: ErrorDetail[] = [];
    const seen = new Set<string>();
    const addDiagnostic = (diagnostic: Diagnostic) => {
      const key = `${diagnostic.code}|${diagnostic.path ?? ''}|${diagnostic.message}`;
      if (seen.has(key)) return;
      seen.add(key);
      problems.push(diagnosticDetail(diagnostic));
    };
    let compiled: CompiledScenario | undefined;
    try {
      compiled = this.engine.compile(cacheKey, document);
    } catch (error) {
      if (!(error instanceof ScenarioCompileError)) throw error;
      error.diagnostics.forEach(addDiagnostic);
    }
    (await this.engine.diagnose(document, { ownerId })).forEach(addDiagnostic);
    if (!compiled) return problems;
    if (validationData !== undefined) {
      try {
        await this.engine.run(compiled, validationData, context);
      } catch (error) {
        problems.push(...runProblems(error, 'body'));
      }
    }
    const reports = await this.engine.runTestCases(compiled, testCases.map(testCaseSpec), context);
    reports.forEach((report, index) => {
      if (report.passed || report.skipped) return;
      const testCase = testCases[index];
      problems.push({
        path: `testCases[${index}]`,
        code: 'TEST_CASE_FAILED',
        message: `Test case "${testCase.name}" failed: ${report.reason ?? 'the expression is not true'}`,
        ...(testCase.id !== undefined ? { testCaseId: testCase.id } : {}),
        testCaseName: testCase.name,
        expected: testCase.expression,
        actual: report.actual,
        reason: report.reason ?? 'the expression is not true',
      });
    });
    return problems;
  }

  /**
   * What deployScenario would find wrong with an imported scenario deployed by overwrite_deploy:
   * its content checked against the test cases it will have (the imported ones with
   * overwrite_develop or for a new name, else the stored ones).
   */
  private async importDeployProblems(
    ownerId: number,
    item: PreparedImport,
    switches: ImportSwitches,
  ): Promise<Diagnostic[]> {
    const existing = await this.store.findByName(ownerId, item.name);
    const testCases =
      switches.overwriteDevelop || !existing ? item.testCases : await this.store.listTestCases(existing.id);
    const problems = await this.problemsOfDocument(
      ownerId,
      item.document,
      contentCacheKey(item.version.content, item.version.nodeProperties),
      testCases,
    );
    return problems.map(problemDiagnostic);
  }

  /** [] when the document compiles, else its diagnostics. */
  private async compileDiagnostics(ownerId: number, stored: ScenarioDocument): Promise<Diagnostic[]> {
    const { document, cacheKey } = await this.models.resolve(
      ownerId,
      stored,
      contentCacheKey(stored.content, JSON.stringify(stored.nodeProperties)),
    );
    try {
      this.engine.compile(cacheKey, document);
      return [];
    } catch (error) {
      if (error instanceof ScenarioCompileError) return error.diagnostics;
      throw error;
    }
  }

  private async importOne(
    trx: StoreTransaction,
    ownerId: number,
    item: PreparedImport,
    check: ImportCheck,
    switches: ImportSwitches,
  ): Promise<ImportOutcomeDto> {
    const notDeployed = (scenarioId: number): ImportOutcomeDto => ({
      name: item.name,
      scenarioId: String(scenarioId),
      outcome: 'NOT_DEPLOYED',
      diagnostics: check.diagnostics.map(diagnosticDto),
    });
    const existing = await this.store.findByName(ownerId, item.name, trx);
    if (!existing) {
      const scenarioId = await this.insertScenario(trx, ownerId, item.name);
      await this.store.putDevelopVersion(trx, scenarioId, item.version, 'import');
      await this.store.replaceTestCases(trx, scenarioId, item.testCases);
      return check.compiles
        ? { name: item.name, scenarioId: String(scenarioId), outcome: 'CREATED' }
        : notDeployed(scenarioId);
    }
    if (!switches.overwriteDevelop && !switches.overwriteDeploy)
      return { name: item.name, scenarioId: String(existing.id), outcome: 'SKIPPED' };
    const locked = await this.store.lockById(trx, existing.id);
    if (!locked) throw scenarioNotFound(`Scenario "${item.name}" was deleted during the import.`);
    if (switches.overwriteDevelop) await this.store.replaceTestCases(trx, existing.id, item.testCases);
    if (!check.compiles) {
      // Never deployed; kept as the development version so it can be fixed.
      await this.store.putDevelopVersion(trx, existing.id, item.version, 'import');
      return notDeployed(existing.id);
    }
    if (switches.overwriteDevelop) await this.store.putDevelopVersion(trx, existing.id, item.version, 'import');
    if (!switches.overwriteDeploy) {
      await this.store.touch(trx, existing.id);
      return { name: item.name, scenarioId: String(existing.id), outcome: 'UPDATED' };
    }
    if (check.diagnostics.length > 0) {
      // Fails deploy's validation: not deployed; the development version changed only if overwrite_develop asked for it.
      if (switches.overwriteDevelop) await this.store.touch(trx, existing.id);
      return notDeployed(existing.id);
    }
    const created = await this.store.insertDeployedVersion(trx, locked, item.version, 'import');
    return {
      name: item.name,
      scenarioId: String(existing.id),
      outcome: switches.overwriteDevelop ? 'UPDATED_AND_DEPLOYED' : 'DEPLOYED',
      version: String(created.versionNumber),
    };
  }

  private async insertScenario(trx: StoreTransaction, ownerId: number, name: string): Promise<number> {
    try {
      return await this.store.insertScenario(trx, ownerId, name);
    } catch (error) {
      if (isDuplicateKey(error)) throw nameTaken(name);
      throw error;
    }
  }

  /** One transaction, retried when MariaDB picks it as a deadlock victim. */
  private write<T>(work: (trx: StoreTransaction) => Promise<T>): Promise<T> {
    return retryOnDeadlock(() => this.store.transaction(work));
  }

  private versionDto(
    scenario: ScenarioRecord,
    version: VersionRecord,
    testCases: TestCaseRecord[],
  ): ScenarioVersionDto {
    return {
      ...versionFields(scenario, version),
      userId: String(scenario.ownerId),
      owner: scenario.ownerName,
      content: version.content,
      nodeProperties: documentOf(version).nodeProperties,
      testCases: testCases.map(testCaseDto),
    };
  }
}

/** A stored version as other features are given it (ScenarioVersions): label, content hash, document. */
function snapshotOf(version: VersionRecord): VersionSnapshot {
  return {
    versionId: version.id,
    label: labelOf(version),
    contentHash: contentHash(version.content, version.nodeProperties),
    document: documentOf(version),
  };
}

/** Compile-cache key: deployed versions share the resolver's key (`version:<id>`); anything editable is keyed by its content. */
function cacheKeyOf(version: VersionRecord): string {
  return version.status === 'DEPLOYED'
    ? deployedCacheKey(version.id)
    : contentCacheKey(version.content, version.nodeProperties);
}

/** No replay feature wired in: every reference is unknown. */
const NO_REPLAYS: ReplayReferences = {
  async requireTested(scenario, replayId) {
    throw new NotFoundError(`Scenario "${scenario.name}" has no replay "${replayId}".`, 'REPLAY_NOT_FOUND', [
      { path: 'query.replay', message: 'is not a replay of this scenario' },
    ]);
  },
};

function testCaseSpec(testCase: NewTestCase & { id?: number }): TestCaseSpec {
  const variables: Record<string, unknown> = {};
  for (const variable of testCase.variables) variables[variable.name] = variable.value ?? null;
  return {
    id: testCase.id,
    name: testCase.name,
    variables,
    expression: { code: testCase.expression, language: 'javascript' },
    ignore: testCase.ignore,
  };
}

/** The fields a version's preview (listVersions) and its full DTO (open and the writes) share. */
function versionFields(
  scenario: ScenarioRecord,
  version: Omit<VersionRecord, 'content' | 'nodeProperties'>,
): ScenarioVersionPreviewDto {
  return {
    id: String(version.id),
    scenarioId: String(scenario.id),
    name: scenario.name,
    version: labelOf(version),
    // Every version written by this service has a source; older rows may not.
    ...(version.sourceVersion === null ? {} : { sourceVersion: version.sourceVersion }),
    description: version.description,
    status: version.status,
    createdAt: version.createdAt.toISOString(),
  };
}

function testCaseDto(testCase: TestCaseRecord): ScenarioTestCaseDto {
  return {
    id: String(testCase.id),
    externalId: testCase.id,
    name: testCase.name,
    variables: testCase.variables.map((variable) =>
      'value' in variable ? { variableName: variable.name, value: variable.value } : { variableName: variable.name },
    ),
    expression: { code: testCase.expression, language: 'javascript' },
    ignore: testCase.ignore,
  };
}

function diagnosticDto(diagnostic: Diagnostic): Diagnostic {
  const dto: Diagnostic = { code: diagnostic.code, message: diagnostic.message };
  if (diagnostic.nodeId !== undefined) dto.nodeId = diagnostic.nodeId;
  if (diagnostic.path !== undefined) dto.path = diagnostic.path;
  if (diagnostic.line !== undefined) dto.line = diagnostic.line;
  if (diagnostic.column !== undefined) dto.column = diagnostic.column;
  return dto;
}

/** A validation problem as an import outcome's diagnostic (the Diagnostic schema has no test-case fields). */
function problemDiagnostic(problem: ErrorDetail): Diagnostic {
  const diagnostic: Diagnostic = {
    code: typeof problem.code === 'string' ? problem.code : 'VALIDATION_ERROR',
    message: problem.message,
  };
  for (const key of ['nodeId', 'path'] as const)
    if (typeof problem[key] === 'string') diagnostic[key] = problem[key] as string;
  for (const key of ['line', 'column'] as const)
    if (typeof problem[key] === 'number') diagnostic[key] = problem[key] as number;
  return diagnostic;
}

function diagnosticDetail(diagnostic: Diagnostic): ErrorDetail {
  return {
    ...diagnosticDto(diagnostic),
    path: diagnostic.path ?? (diagnostic.nodeId ? `nodes.${diagnostic.nodeId}` : undefined),
  };
}

/** The validation data's run failed: input violations (under `base`) or the failing node. */
function runProblems(error: unknown, base: string): ErrorDetail[] {
  if (error instanceof InputValidationError) {
    return error.violations.map((violation) => ({
      path: `${base}.${violation.variable}`,
      code: 'INVALID_INPUT',
      variable: violation.variable,
      message: `Validation data: ${violation.variable} ${violation.message}`,
    }));
  }
  if (error instanceof ScenarioRunError) {
    const detail: ErrorDetail = { code: error.code, message: `Validation data run failed: ${error.message}` };
    if (error.nodeId) Object.assign(detail, { nodeId: error.nodeId, path: `nodes.${error.nodeId}` });
    return [detail];
  }
  throw error;
}

function validationErrors(scenario: ScenarioRecord, label: string, problems: ErrorDetail[]): UnprocessableError {
  return new UnprocessableError(
    `Scenario "${scenario.name}" (${label}) is not valid: ${problems.length} problem(s). First: ${problems[0].message}`,
    'VALIDATION_ERRORS',
    problems,
  );
}

function scenarioNotFound(message: string): NotFoundError {
  return new NotFoundError(message, 'SCENARIO_NOT_FOUND');
}

function nameTaken(name: string): ConflictError {
  return new ConflictError(`You already have a scenario named "${name}".`, 'NAME_TAKEN', [
    { path: 'name', message: `"${name}" is taken` },
  ]);
}
