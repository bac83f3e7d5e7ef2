import type { components } from '../../generated/api-types.js';
import type { ScenarioDocument } from '../engine/index.js';

/** Wire shapes (from the spec) the scenario operations answer with or read. */
export type ScenarioVersionDto = components['schemas']['ScenarioVersion'];
export type ScenarioVersionPreviewDto = components['schemas']['ScenarioVersionPreview'];
export type ScenarioSummaryDto = components['schemas']['ScenarioSummary'];
export type ScenarioPageDto = components['schemas']['ScenarioPage'];
export type ScenarioImportDto = components['schemas']['ScenarioImport'];
export type ImportOutcomeDto = components['schemas']['ImportOutcome'];
export type ScenarioTestCaseDto = components['schemas']['ScenarioTestCase'];
export type ScenarioTestCaseSaveDto = components['schemas']['ScenarioTestCaseDto'];
export type VariableValueDto = components['schemas']['VariableValueDto'];
export type VariableInfoMapDto = components['schemas']['VariableInfoMap'];
export type DebugResultDto = components['schemas']['DebugResult'];

export type VersionStatus = 'DEVELOP' | 'DEPLOYED';

/** Label of the development version; deployed versions are labelled by their number. */
export const DEVELOP_LABEL = 'develop';

export interface ScenarioRecord {
  id: number;
  ownerId: number;
  ownerName: string;
  name: string;
}

/** A scenario as listScenarios shows it: when it was made and last changed, and its latest deployed version number (null when none). */
export interface ScenarioListing extends ScenarioRecord {
  createdAt: Date;
  updatedAt: Date;
  deployedVersion: number | null;
}

export interface VersionRecord {
  id: number;
  scenarioId: number;
  status: VersionStatus;
  /** null for the development version */
  versionNumber: number | null;
  sourceVersion: string | null;
  description: string;
  /** canonical JSON text of the graph, stored as given */
  content: string;
  /** JSON text of the nodeProperties map, stored as given */
  nodeProperties: string;
  createdAt: Date;
  /** Deployed versions deployed with a `replay` reference: that replay's id; else null. */
  replayId: string | null;
}

export interface TestCaseVariable {
  name: string;
  value?: unknown;
}

export interface TestCaseRecord {
  id: number;
  scenarioId: number;
  name: string;
  variables: TestCaseVariable[];
  /** JavaScript boolean expression */
  expression: string;
  ignore: boolean;
}

/** A test case before it has an id (import, copy). */
export type NewTestCase = Omit<TestCaseRecord, 'id' | 'scenarioId'>;

/** What is written as a version: the document as JSON text plus its description. */
export interface VersionContent {
  content: string;
  nodeProperties: string;
  description: string;
}

export function labelOf(version: Pick<VersionRecord, 'versionNumber'>): string {
  return version.versionNumber === null ? DEVELOP_LABEL : String(version.versionNumber);
}

/** A test case variable as sent (`variableName`, or `name` as written before 1.9) in the form it is stored. */
export function storedVariable(variable: VariableValueDto): TestCaseVariable {
  // the spec lets exactly one of the two through
  const name = (variable.variableName ?? variable.name) as string;
  return 'value' in variable ? { name, value: variable.value } : { name };
}

export function documentOf(version: Pick<VersionRecord, 'content' | 'nodeProperties'>): ScenarioDocument {
  return {
    content: version.content,
    nodeProperties: JSON.parse(version.nodeProperties) as ScenarioDocument['nodeProperties'],
  };
}
