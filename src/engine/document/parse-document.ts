import type { DocumentProblem, GraphNode, NodeType, ScenarioDocument, ScenarioGraph } from '../types.js';
import { NODE_TYPES } from '../types.js';
import { pathBeyondDepth } from './nesting-depth.js';
import { specSchemas } from './spec-schemas.js';

/**
 * Deepest nesting of the JSON of a document's graph and of each node's settings (the value itself
 * is level 1). Settings such as an HTTP node's `body` take any JSON; thousands of levels there
 * would break compilation (JSON.stringify) with a RangeError, so deeper is a document problem.
 */
export const MAX_DOCUMENT_DEPTH = 64;

export interface ParsedDocument {
  graph: ScenarioGraph;
  /** parsed settings by node id (only for nodes whose settings are well-formed) */
  settings: Map<string, unknown>;
  problems: DocumentProblem[];
}

/** Parses the JSON strings and checks them against the spec's schemas; collects every shape problem. */
export function parseScenarioDocument(doc: ScenarioDocument): ParsedDocument {
  const problems: DocumentProblem[] = [];
  const settings = new Map<string, unknown>();
  const schemas = specSchemas();
  let graph: ScenarioGraph = { nodes: [], edges: [] };
  if (typeof doc?.content !== 'string') {
    problems.push({ path: 'content', message: 'must be a string holding the JSON of the graph' });
  } else {
    const parsed = parseJson(doc.content, 'content', problems);
    if (parsed !== undefined) {
      const graphProblems = schemas.graph(parsed, 'content');
      problems.push(...graphProblems);
      if (graphProblems.length === 0) graph = parsed as ScenarioGraph;
      else graph = salvageGraph(parsed);
    }
  }
  const nodeProperties = doc?.nodeProperties;
  if (nodeProperties === null || typeof nodeProperties !== 'object') {
    problems.push({ path: 'nodeProperties', message: 'must be an object keyed by node id' });
    return { graph, settings, problems };
  }
  const nodesById = new Map(graph.nodes.map((n) => [n.id, n]));
  for (const [key, props] of Object.entries(nodeProperties)) {
    const base = `nodeProperties.${key}`;
    if (props === null || typeof props !== 'object') {
      problems.push({ path: base, message: 'must be an object {id, type, content}' });
      continue;
    }
    if (props.id !== key) problems.push({ path: `${base}.id`, message: `must equal its key "${key}"` });
    const node = nodesById.get(key);
    if (props.type === undefined) {
      problems.push({ path: `${base}.type`, message: `is required: there is no graph node "${key}" to take it from` });
      continue;
    }
    if (!NODE_TYPES.includes(props.type)) {
      problems.push({ path: `${base}.type`, message: `must be one of ${NODE_TYPES.join(', ')}` });
      continue;
    }
    if (node && node.type !== props.type) {
      problems.push({ path: `${base}.type`, message: `is ${props.type} but graph node "${key}" is ${node.type}` });
    }
    if (typeof props.content !== 'string') {
      problems.push({ path: `${base}.content`, message: 'must be a string holding the JSON of the node settings' });
      continue;
    }
    const parsed = parseJson(props.content, `${base}.content`, problems);
    if (parsed === undefined) continue;
    const settingProblems = schemas.settings[props.type as NodeType](parsed, `${base}.content`);
    problems.push(...settingProblems);
    if (settingProblems.length === 0 && (!node || node.type === props.type)) settings.set(key, parsed);
  }
  return { graph, settings, problems };
}

function parseJson(text: string, path: string, problems: DocumentProblem[]): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    problems.push({ path, message: `is not valid JSON: ${(error as Error).message}` });
    return undefined;
  }
  const tooDeep = pathBeyondDepth(value, MAX_DOCUMENT_DEPTH, path);
  if (tooDeep !== undefined) {
    problems.push({ path: tooDeep, message: `is nested deeper than ${MAX_DOCUMENT_DEPTH} levels` });
    return undefined;
  }
  return value;
}

/** Keeps the well-formed nodes and edges of an invalid graph so the compiler can still report more. */
function salvageGraph(value: unknown): ScenarioGraph {
  const raw = (value ?? {}) as { nodes?: unknown; edges?: unknown };
  const nodes = (Array.isArray(raw.nodes) ? raw.nodes : []).filter(
    (n): n is GraphNode => !!n && typeof n.id === 'string' && NODE_TYPES.includes(n.type),
  );
  const edges = (Array.isArray(raw.edges) ? raw.edges : []).filter(
    (e) => !!e && typeof e.from === 'string' && typeof e.to === 'string',
  );
  return { nodes, edges };
}

export function validateScenarioDocument(doc: ScenarioDocument): DocumentProblem[] {
  return parseScenarioDocument(doc).problems;
}
