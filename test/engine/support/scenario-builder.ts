import { normalizeScenarioDocument, type EnginePorts, type ScenarioDocument } from '../../../src/engine/index.js';

/** A node in test shorthand: graph fields plus `settings` (the NodeProperties content, given as an object). */
export interface TestNode {
  id: string;
  type: string;
  name?: string;
  mergeType?: string;
  prefix?: string;
  settings?: unknown;
}

/** Builds a canonical document from nodes and edges written as objects. */
export function scenario(nodes: TestNode[], edges: { from: string; to: string; when?: boolean }[]): ScenarioDocument {
  const nodeProperties: Record<string, { id: string; type: string; content: unknown }> = {};
  for (const node of nodes)
    if (node.settings !== undefined) nodeProperties[node.id] = { id: node.id, type: node.type, content: node.settings };
  const graphNodes = nodes.map(({ settings: _settings, ...graphNode }) => graphNode);
  return normalizeScenarioDocument({ content: { nodes: graphNodes, edges }, nodeProperties });
}

/** START → nodes in a line → END (all variables). */
export function chain(inputs: unknown[], middle: TestNode[], end: unknown = {}): ScenarioDocument {
  const nodes: TestNode[] = [
    { id: 'start', type: 'START', settings: { inputs } },
    ...middle,
    { id: 'end', type: 'END', settings: end },
  ];
  const edges = nodes.slice(1).map((n, k) => ({ from: nodes[k].id, to: n.id }));
  return scenario(nodes, edges);
}

export const input = (name: string, type: string, required = true, extra: Record<string, unknown> = {}) => ({
  name,
  type: { type, ...extra },
  required,
});

export const script = (id: string, code: string, outputs: string[], extra: Partial<TestNode> = {}): TestNode => ({
  id,
  type: 'SCRIPT',
  ...extra,
  settings: { language: 'javascript', code, outputs },
});

/** Ports that fail loudly unless a test provides them. */
export function fakePorts(overrides: Partial<EnginePorts> = {}): EnginePorts {
  return {
    lookups: {
      lookup: async () => {
        throw new Error('no lookup port in this test');
      },
      describe: async () => null,
    },
    scenarios: { resolveDeployed: async () => null },
    http: {
      request: async () => {
        throw new Error('no http port in this test');
      },
    },
    ...overrides,
  };
}

/** An in-memory collection store implementing the lookup port. */
export function memoryLookups(
  collections: Record<string, { rows: Record<string, unknown>[]; indexed: string[] }>,
): EnginePorts['lookups'] {
  return {
    async lookup(req) {
      const collection = collections[req.collection];
      if (!collection) throw new Error(`no collection ${req.collection}`);
      const rows = collection.rows
        .filter((row) => row[req.keyColumn] === req.key)
        .map((row) => (req.columns ? Object.fromEntries(req.columns.map((c) => [c, row[c] ?? null])) : { ...row }));
      return req.mode === 'ONE' ? (rows[0] ?? null) : rows;
    },
    async describe(req) {
      const collection = collections[req.collection];
      if (!collection) return null;
      return { columns: Object.keys(collection.rows[0] ?? {}), indexedColumns: collection.indexed };
    },
  };
}
