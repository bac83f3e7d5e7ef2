import type { NodeProperties, NodeType, ScenarioDocument } from '../types.js';

export interface ScenarioDocumentInput {
  content: unknown;
  nodeProperties: Record<string, { id: string; type: string; content: unknown }>;
}

/** Turns hand-written documents (content given as objects) into the canonical form where every content is a JSON string. */
export function normalizeScenarioDocument(input: ScenarioDocumentInput): ScenarioDocument {
  const nodeProperties: Record<string, NodeProperties> = {};
  for (const [key, props] of Object.entries(input.nodeProperties ?? {})) {
    nodeProperties[key] = {
      id: props.id,
      type: props.type as NodeType,
      content: toJsonString(props.content, `nodeProperties.${key}.content`),
    };
  }
  return { content: toJsonString(input.content, 'content'), nodeProperties };
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
  constructor(readonly path: string, reason: string) {
    super(`${path} ${reason}`);
    this.name = 'DocumentNormalizationError';
  }
}
