import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { normalizeScenarioDocument, validateScenarioDocument } from '../../src/engine/index.js';
import { ScenarioEngine } from '../../src/engine/scenario-engine.js';
import { fakePorts } from './support/scenario-builder.js';

interface Fragment {
  content?: unknown;
  nodes?: Array<{ id: string; type: string }>;
  nodeProperties?: Record<string, { id?: string; type: string; content: unknown }>;
}

/** What docs/scenarios.md promises must hold: its YAML examples are valid scenario documents. */
const markdown = readFileSync(new URL('../../docs/scenarios.md', import.meta.url), 'utf8');
const blocks = [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => parseYaml(match[1]) as Fragment | null);


const complete = blocks.filter((block): block is Fragment & { content: unknown } => !!block && 'content' in block && 'nodeProperties' in block);
const fragments = blocks.filter((block): block is Fragment => !!block && !('content' in block) && 'nodeProperties' in block && 'nodes' in block);

/** Wraps a one-kind example (nodes + nodeProperties) into start → nodes → end, to check its settings against the schema. */
function wrap(fragment: Fragment) {
  const nodes = [...(fragment.nodes ?? [])];
  const nodeProperties: Record<string, { id: string; type: string; content: unknown }> = {};
  for (const [id, props] of Object.entries(fragment.nodeProperties ?? {})) nodeProperties[id] = { id, type: props.type, content: props.content };
  if (!nodes.some((node) => node.type === 'START')) {
    nodes.unshift({ id: 'docStart', type: 'START' });
    nodeProperties.docStart = { id: 'docStart', type: 'START', content: { inputs: [] } };
  }
  if (!nodes.some((node) => node.type === 'END')) nodes.push({ id: 'docEnd', type: 'END' });
  const edges = nodes.slice(1).map((node, index) => ({ from: nodes[index].id, to: node.id }));
  return normalizeScenarioDocument({ content: { nodes, edges }, nodeProperties });
}

describe('docs/scenarios.md', () => {
  it('has complete example scenarios and per-kind examples', () => {
    expect(complete.length).toBeGreaterThan(0);
    expect(fragments.length).toBeGreaterThan(5);
  });

  it.each(complete.map((doc, index) => [index, doc] as const))('complete example %i is well-formed and compiles', (_index, doc) => {
    const normalized = normalizeScenarioDocument(doc as never);
    expect(validateScenarioDocument(normalized)).toEqual([]);
    const engine = new ScenarioEngine({ ports: fakePorts() });
    try {
      expect(() => engine.compile('doc-example', normalized)).not.toThrow();
    } finally {
      engine.dispose();
    }
  });

  it.each(fragments.map((fragment, index) => [index, fragment] as const))('node example %i matches the node settings schema', (_index, fragment) => {
    expect(validateScenarioDocument(wrap(fragment))).toEqual([]);
  });
});
