import type { ScenarioDocument, StartNodeSettings, VariableInfo } from '../types.js';

/** The inputs declared by the START node ([] when the document has no readable START node). */
export function inputVariables(doc: ScenarioDocument): VariableInfo[] {
  try {
    const graph = JSON.parse(doc.content) as { nodes?: { id: string; type: string }[] };
    const start = graph.nodes?.find((n) => n.type === 'START');
    const props = start ? doc.nodeProperties[start.id] : undefined;
    if (!props) return [];
    const settings = (
      typeof props.content === 'string' ? JSON.parse(props.content) : props.content
    ) as StartNodeSettings;
    return Array.isArray(settings?.inputs) ? settings.inputs : [];
  } catch {
    return [];
  }
}

/** The tag that marks an input variable as personal data; matched without regard to case (`pii`, `PII`, `Pii`). */
const PII_TAG = 'pii';

/** Whether a declared input is personal data: its value is never echoed in a message and is masked in decision records. */
export function isPiiTagged(variable: VariableInfo): boolean {
  return variable.tags?.some((tag) => typeof tag === 'string' && tag.toLowerCase() === PII_TAG) ?? false;
}
