import {
  DocumentNormalizationError,
  normalizeScenarioDocument,
  validateScenarioDocument,
  type ScenarioDocument,
} from '../engine/index.js';
import type { ErrorDetail } from '../errors/app-error.js';
import { BadRequestError } from '../errors/bad-request-error.js';
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

/** The parts of an imported scenario that make its document. */
type ImportedDocument = Pick<ScenarioImportDto, 'name' | 'content' | 'nodeProperties'>;

/**
 * Normalises every scenario of an import (content given as objects becomes JSON text; a node's
 * missing `id` and `type` are taken from its key and its graph node) and checks it against the document schemas. Returns the
 * prepared scenarios, or every problem of every scenario, each path prefixed `scenarios[i].`.
 */
export function prepareImport(body: ScenarioImportDto | ScenarioImportDto[]): {
  prepared: PreparedImport[];
  problems: ErrorDetail[];
} {
  const items = Array.isArray(body) ? body : [body];
  const prepared: PreparedImport[] = [];
  const { documents, problems } = checkDocuments(items);
  items.forEach((item, index) => {
    const document = documents[index];
    if (!document) return;
    prepared.push({
      index,
      name: item.name,
      document,
      version: {
        content: document.content,
        nodeProperties: JSON.stringify(document.nodeProperties),
        description: item.description ?? '',
      },
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

/**
 * The document problems of an import body of any shape, or undefined when some scenario is not even
 * shaped like one (a name, a content, node properties with contents): the spec's validation reports that.
 * Run before the spec's validation, because the spec types `content` and node contents as a union
 * (JSON text, or any of nine settings objects), and a validator can only say that no member of the union
 * matched, for every member; the document checker knows the node's type and names scenario, node and field.
 */
export function importDocumentProblems(body: unknown): ErrorDetail[] | undefined {
  const items = Array.isArray(body) ? (body as unknown[]) : [body];
  if (items.length === 0 || !items.every(isShapedLikeADocument)) return undefined;
  return checkDocuments(items).problems;
}

/** 400 INVALID_SCENARIO listing every problem: nothing of the import is stored. */
export function invalidScenario(problems: ErrorDetail[]): BadRequestError {
  const [first] = problems;
  return new BadRequestError(
    `The import breaks the scenario document schema (${problems.length} problem(s)); nothing was imported. First: ${first.path} ${first.message.split(': ').slice(1).join(': ')}`,
    'INVALID_SCENARIO',
    problems,
  );
}

function checkDocuments(items: ImportedDocument[]): {
  documents: Array<ScenarioDocument | undefined>;
  problems: ErrorDetail[];
} {
  const documents: Array<ScenarioDocument | undefined> = [];
  const problems: ErrorDetail[] = [];
  const firstIndexOfName = new Map<string, number>();
  items.forEach((item, index) => {
    const prefix = `scenarios[${index}]`;
    const problem = (path: string, message: string) =>
      problems.push({
        path: `${prefix}.${path}`,
        message: `${item.name}: ${path} ${message}`,
        index,
        scenario: item.name,
      });
    const earlier = firstIndexOfName.get(item.name);
    if (earlier !== undefined)
      problem('name', `appears again (also scenarios[${earlier}]); a name may appear once per import`);
    else firstIndexOfName.set(item.name, index);
    let document: ScenarioDocument;
    try {
      document = normalizeScenarioDocument({ content: item.content, nodeProperties: item.nodeProperties });
    } catch (error) {
      if (error instanceof DocumentNormalizationError) {
        problem(error.path, error.message.slice(error.path.length + 1));
        documents.push(undefined);
        return;
      }
      throw error;
    }
    for (const found of validateScenarioDocument(document)) problem(found.path, found.message);
    documents.push(document);
  });
  return { documents, problems };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function isShapedLikeADocument(item: unknown): item is ImportedDocument {
  if (!isObject(item) || typeof item.name !== 'string') return false;
  if (typeof item.content !== 'string' && !isObject(item.content)) return false;
  if (!isObject(item.nodeProperties)) return false;
  return Object.values(item.nodeProperties).every(
    (node) =>
      isObject(node) &&
      (node.type === undefined || typeof node.type === 'string') &&
      (typeof node.content === 'string' || isObject(node.content)) &&
      (node.id === undefined || typeof node.id === 'string'),
  );
}
