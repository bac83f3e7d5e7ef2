import type { NodeProperties, NodeType, ScenarioDocument } from '../types.js';

/**
 * A scenario document as written by hand or sent to import: `content` fields may be objects, and a
 * nodeProperties entry may leave out `id` and `type` (they are facts of the graph node of the same key).
 */
export interface ScenarioDocumentInput {
  content: unknown;
  nodeProperties: Record<string, { id?: string; type?: string; content: unknown }>;
}

/**
 * Turns a hand-written document into the canonical form: every content becomes a JSON string, and every
 * nodeProperties entry gets its `id` (its key) and `type` (the graph node's) when they were left out.
 * Given values are kept as they are, so a contradiction still reaches validation and is reported there.
 */
export function normalizeScenarioDocument(input: ScenarioDocumentInput): ScenarioDocument {
  const content = toJsonString(input.content, 'content');
  const graphTypes = nodeTypesOf(content);
  const nodeProperties: Record<string, NodeProperties> = {};
  for (const [key, props] of Object.entries(input.nodeProperties ?? {})) {
    if (props === null || typeof props !== 'object') {
      nodeProperties[key] = props as never;
      continue;
    }
    nodeProperties[key] = {
      id: props.id ?? key,
      type: (props.type ?? graphTypes.get(key)) as NodeType,
      content: toJsonString(props.content, `nodeProperties.${key}.content`),
    };
  }
  return { content, nodeProperties };
}

/** Node id → type as the graph declares them; empty when the graph is not (yet) well-formed. */
function nodeTypesOf(content: string): Map<string, string> {
  const types = new Map<string, string>();
  const graph = JSON.parse(content) as { nodes?: unknown } | null;
  if (!graph || !Array.isArray(graph.nodes)) return types;
  for (const node of graph.nodes as Array<{ id?: unknown; type?: unknown } | null>) {
    if (node && typeof node.id === 'string' && typeof node.type === 'string' && !types.has(node.id))
      types.set(node.id, node.type);
  }
  return types;
}

function toJsonString(value: unknown, path: string): string {
  if (typeof value === 'string') {
    try {
      JSON.parse(value);
    } catch (error) {
      throw new DocumentNormalizationError(path, `is not valid JSON: ${(error as Error).message}`);
    }
    return value;
  }
  if (value === undefined) throw new DocumentNormalizationError(path, 'is missing');
  return JSON.stringify(value, null, 2);
}

/** A content string does not parse as JSON. */
export class DocumentNormalizationError extends Error {
  readonly code = 'DOCUMENT_INVALID';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path} ${reason}`);
    this.name = 'DocumentNormalizationError';
  }
}
