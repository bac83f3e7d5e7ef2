import { DocumentNormalizationError, normalizeScenarioDocument, validateScenarioDocument, type ScenarioDocument } from '../engine/index.js';
import type { ErrorDetail } from '../errors/app-error.js';
import type { NewTestCase, ScenarioImportDto, VersionContent } from './scenario-types.js';
import { storedTestCaseVariables } from './test-case-variables.js';

/** One scenario of an import body, normalised and shape-checked, ready to store. */
export interface PreparedImport {
  index: number;
  name: string;
  document: ScenarioDocument;
  version: VersionContent;
  testCases: NewTestCase[];
}

/**
 * Normalises every scenario of an import (content given as objects becomes JSON text; a node's
 * missing `id` and `type` are taken from its key and its graph node) and checks it against the document schemas. Returns the
 * prepared scenarios, or every problem of every scenario, each path prefixed `scenarios[i].`.
 */
export function prepareImport(body: ScenarioImportDto | ScenarioImportDto[]): { prepared: PreparedImport[]; problems: ErrorDetail[] } {
  const items = Array.isArray(body) ? body : [body];
  const prepared: PreparedImport[] = [];
  const problems: ErrorDetail[] = [];
  const firstIndexOfName = new Map<string, number>();
  items.forEach((item, index) => {
    const prefix = `scenarios[${index}]`;
    const problem = (path: string, message: string) => problems.push({ path: `${prefix}.${path}`, message: `${item.name}: ${path} ${message}`, index, scenario: item.name });
    const earlier = firstIndexOfName.get(item.name);
    if (earlier !== undefined) problem('name', `appears again (also scenarios[${earlier}]); a name may appear once per import`);
    else firstIndexOfName.set(item.name, index);
    let document: ScenarioDocument;
    try {
      document = normalizeScenarioDocument({ content: item.content, nodeProperties: item.nodeProperties });
    } catch (error) {
      if (error instanceof DocumentNormalizationError) {
        problem(error.path, error.message.slice(error.path.length + 1));
        return;
      }
      throw error;
    }
    for (const found of validateScenarioDocument(document)) problem(found.path, found.message);
    prepared.push({
      index,
      name: item.name,
      document,
      version: { content: document.content, nodeProperties: JSON.stringify(document.nodeProperties), description: item.description ?? '' },
      testCases: (item.testCases ?? []).map((testCase) => ({
        name: testCase.name,
        variables: storedTestCaseVariables(testCase.variables),
        expression: testCase.expression.code,
        ignore: testCase.ignore ?? false,
      })),
    });
  });
  return { prepared, problems };
}

