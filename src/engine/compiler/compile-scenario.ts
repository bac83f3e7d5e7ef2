import { parseScenarioDocument, type ParsedDocument } from '../document/parse-document.js';
import type { Diagnostic, MergeType, NodeType, ScenarioDocument, StartNodeSettings, VariableInfo } from '../types.js';
import { checkGraph, type GraphShape } from './graph-checks.js';
import { NodeContext, type SyntaxChecker } from './node-context.js';
import { NODE_COMPILERS } from './node-compilers.js';
import { nodeSource, programSource } from './program-source.js';
import { definedVariables, prefixOf, variableScopes, type Scope } from './variable-scopes.js';

/** Host-side facts about one node of a compiled scenario. */
export interface NodePlan {
  index: number;
  id: string;
  name: string;
  type: NodeType;
  settings: unknown;
  defs: string[];
  prefix: string;
  mergeType: MergeType;
}

export interface ScenarioPlan {
  /** evaluates in the sandbox to `function (rt) → { nodes, validators }` (the runtime's view of the program) */
  source: string;
  /** The ONNX files its MODEL nodes call, as [sha256, base64]: the hosts get them beside the source. */
  onnxModels?: [string, string][];
  startIndex: number;
  nodes: NodePlan[];
  inputs: VariableInfo[];
}

/**
 * Checks everything about a document and, when there is nothing to report, generates its sandbox program. The
 * passes, in order, each adding to one list of diagnostics: the document's shape (documentProblems), the graph
 * (checkGraph), nodeProperties against the graph (checkNodeProperties), the inputs (checkInputs), the variables
 * each node defines (definedVariables) and may read (variableScopes), then each node's checks and code
 * (compileNodes, NODE_COMPILERS) and the program around them (programSource).
 */
export function compileScenario(
  doc: ScenarioDocument,
  checkSyntax: SyntaxChecker,
): { plan: ScenarioPlan | null; diagnostics: Diagnostic[] } {
  const parsed = parseScenarioDocument(doc);
  const diagnostics = documentProblems(parsed);
  const shape = checkGraph(parsed.graph, diagnostics);
  checkNodeProperties(doc, shape, diagnostics);
  const inputs = checkInputs(shape, parsed, diagnostics);
  const defs = definedVariables(shape, parsed.settings, diagnostics);
  const scopes = variableScopes(shape, defs);
  const index = new Map(shape.order.map((id, i) => [id, i]));
  const { nodePlans, nodeSources, validatorSources, onnxModels } = compileNodes({
    doc,
    parsed,
    shape,
    defs,
    scopes,
    index,
    diagnostics,
    checkSyntax,
  });
  if (diagnostics.length > 0 || !shape.start) return { plan: null, diagnostics };
  const plan: ScenarioPlan = {
    source: programSource(nodeSources, validatorSources),
    startIndex: index.get(shape.start.id)!,
    nodes: nodePlans,
    inputs,
  };
  if (onnxModels.size > 0) plan.onnxModels = [...onnxModels];
  return { plan, diagnostics };
}

/** Pass: the document's shape problems (JSON, schemas), each against its node where the path names one. */
function documentProblems(parsed: ParsedDocument): Diagnostic[] {
  return parsed.problems.map((problem) => {
    const nodeId = /^nodeProperties\.([A-Za-z][A-Za-z0-9_-]*)/.exec(problem.path)?.[1];
    return {
      code: 'DOCUMENT_INVALID',
      message: `${problem.path} ${problem.message}`,
      path: problem.path,
      ...(nodeId ? { nodeId } : {}),
    };
  });
}

/** Pass: every node but END has nodeProperties, and every nodeProperties entry has its node. */
function checkNodeProperties(doc: ScenarioDocument, shape: GraphShape, diagnostics: Diagnostic[]): void {
  const nodeProperties = doc?.nodeProperties && typeof doc.nodeProperties === 'object' ? doc.nodeProperties : {};
  for (const node of shape.nodes.values()) {
    if (node.type !== 'END' && !nodeProperties[node.id]) {
      diagnostics.push({
        code: 'NODE_PROPERTIES_MISSING',
        message: `${node.type} node "${node.id}" has no nodeProperties`,
        nodeId: node.id,
        path: `nodeProperties.${node.id}`,
      });
    }
  }
  for (const key of Object.keys(nodeProperties)) {
    if (!shape.nodes.has(key))
      diagnostics.push({
        code: 'NODE_PROPERTIES_ORPHAN',
        message: `nodeProperties.${key} belongs to no graph node`,
        path: `nodeProperties.${key}`,
      });
  }
}

/** Pass: the scenario's inputs (its START node's), each declared once. */
function checkInputs(shape: GraphShape, parsed: ParsedDocument, diagnostics: Diagnostic[]): VariableInfo[] {
  const start = shape.start;
  if (!start) return [];
  const inputs = (parsed.settings.get(start.id) as StartNodeSettings | undefined)?.inputs ?? [];
  const seen = new Set<string>();
  inputs.forEach((input, k) => {
    if (seen.has(input.name))
      diagnostics.push({
        code: 'DUPLICATE_INPUT',
        message: `Input "${input.name}" is declared twice`,
        nodeId: start.id,
        path: `nodeProperties.${start.id}.content.inputs[${k}].name`,
      });
    seen.add(input.name);
  });
  return inputs;
}

interface NodesInput {
  doc: ScenarioDocument;
  parsed: ParsedDocument;
  shape: GraphShape;
  defs: Map<string, string[] | null>;
  scopes: Map<string, Scope>;
  index: Map<string, number>;
  diagnostics: Diagnostic[];
  checkSyntax: SyntaxChecker;
}

/** Pass: each node reachable from START, in program order: its plan, its checks and its entry in the program. */
function compileNodes({ doc, parsed, shape, defs, scopes, index, diagnostics, checkSyntax }: NodesInput): {
  nodePlans: NodePlan[];
  nodeSources: string[];
  validatorSources: string[];
  onnxModels: Map<string, string>;
} {
  const allVariables = new Set<string>([...defs.values()].flatMap((d) => d ?? []));
  const nodePlans: NodePlan[] = [];
  const nodeSources: string[] = [];
  const validatorSources: string[] = [];
  const onnxModels = new Map<string, string>();
  for (const id of shape.order) {
    const node = shape.nodes.get(id)!;
    const settings = parsed.settings.get(id);
    const { vars, open } = scopes.get(id)!;
    const plan: NodePlan = {
      index: index.get(id)!,
      id,
      name: node.name ?? id,
      type: node.type,
      settings,
      defs: defs.get(id) ?? [],
      prefix: prefixOf(node),
      mergeType: node.mergeType ?? 'OVERWRITE_ALL',
    };
    nodePlans.push(plan);
    if (settings === undefined && node.type !== 'END') continue;
    const ctx = new NodeContext(node, vars, open, allVariables, diagnostics, checkSyntax);
    const fields = NODE_COMPILERS[node.type]({
      ctx,
      settings,
      shape,
      index,
      doc,
      validators: validatorSources,
      onnxModels,
    });
    nodeSources.push(nodeSource(plan, String(index.get(shape.next.get(id) ?? '') ?? -1), fields));
  }
  return { nodePlans, nodeSources, validatorSources, onnxModels };
}
