import type { ScenarioDocument, StartNodeSettings, VariableInfo } from '../types.js';

/** The inputs declared by the START node ([] when the document has no readable START node). */
export function inputVariables(doc: ScenarioDocument): VariableInfo[] {
  try {
    const graph = JSON.parse(doc.content) as { nodes?: { id: string; type: string }[] };
    const start = graph.nodes?.find((n) => n.type === 'START');
    const props = start ? doc.nodeProperties[start.id] : undefined;
    if (!props) return [];
    const settings = (typeof props.content === 'string' ? JSON.parse(props.content) : props.content) as StartNodeSettings;
    return Array.isArray(settings?.inputs) ? settings.inputs : [];
  } catch {
    return [];
  }
}
