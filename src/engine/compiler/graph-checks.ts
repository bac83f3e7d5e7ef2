import type { Diagnostic, GraphEdge, GraphNode, ScenarioGraph } from '../types.js';

/** The executable shape of a graph: each node's successor(s), in a topological order. */
export interface GraphShape {
  nodes: Map<string, GraphNode>;
  start: GraphNode | null;
  /** single successor of non-branching nodes */
  next: Map<string, string>;
  /** true/false successors of DECISION nodes */
  branches: Map<string, { whenTrue?: string; whenFalse?: string }>;
  predecessors: Map<string, string[]>;
  /** topological order of nodes reachable from START (empty if the graph has a cycle) */
  order: string[];
}

/** The two ends of an edge, each of which must name a node of the graph, and what a dangling one is called. */
const EDGE_ENDS = [
  { field: 'from', code: 'UNKNOWN_EDGE_SOURCE', verb: 'starts at' },
  { field: 'to', code: 'UNKNOWN_EDGE_TARGET', verb: 'points to' },
] as const;

/** What an edge may not touch at each end: nothing enters START, nothing leaves END. */
const EDGE_END_RULES = [
  { field: 'to', type: 'START', code: 'EDGE_INTO_START', verb: 'enters' },
  { field: 'from', type: 'END', code: 'EDGE_FROM_END', verb: 'leaves' },
] as const;

export function checkGraph(graph: ScenarioGraph, diagnostics: Diagnostic[]): GraphShape {
  const nodes = new Map<string, GraphNode>();
  graph.nodes.forEach((node, index) => {
    if (nodes.has(node.id)) {
      diagnostics.push({
        code: 'DUPLICATE_NODE_ID',
        message: `Node id "${node.id}" is used more than once`,
        nodeId: node.id,
        path: `content.nodes[${index}].id`,
      });
    } else nodes.set(node.id, node);
  });
  const starts = graph.nodes.filter((n) => n.type === 'START');
  if (starts.length === 0)
    diagnostics.push({ code: 'NO_START_NODE', message: 'The scenario has no START node', path: 'content.nodes' });
  if (starts.length > 1) {
    diagnostics.push({
      code: 'MULTIPLE_START_NODES',
      message: `The scenario has ${starts.length} START nodes (${starts.map((s) => s.id).join(', ')}); it needs exactly one`,
      path: 'content.nodes',
    });
  }
  if (!graph.nodes.some((n) => n.type === 'END'))
    diagnostics.push({ code: 'NO_END_NODE', message: 'The scenario has no END node', path: 'content.nodes' });

  const outgoing = new Map<string, { edge: GraphEdge; index: number }[]>();
  const predecessors = new Map<string, string[]>();
  graph.edges.forEach((edge, index) => {
    const path = `content.edges[${index}]`;
    const unknownEnds = EDGE_ENDS.filter((end) => !nodes.has(edge[end.field]));
    for (const end of unknownEnds)
      diagnostics.push({
        code: end.code,
        message: `Edge ${index} ${end.verb} unknown node "${edge[end.field]}"`,
        path: `${path}.${end.field}`,
      });
    if (unknownEnds.length > 0) return;
    for (const rule of EDGE_END_RULES) {
      const nodeId = edge[rule.field];
      if (nodes.get(nodeId)!.type === rule.type)
        diagnostics.push({
          code: rule.code,
          message: `Edge ${index} ${rule.verb} the ${rule.type} node "${nodeId}"`,
          nodeId,
          path,
        });
    }
    outgoing.set(edge.from, [...(outgoing.get(edge.from) ?? []), { edge, index }]);
    predecessors.set(edge.to, [...(predecessors.get(edge.to) ?? []), edge.from]);
  });

  const next = new Map<string, string>();
  const branches = new Map<string, { whenTrue?: string; whenFalse?: string }>();
  for (const node of nodes.values()) {
    const out = outgoing.get(node.id) ?? [];
    if (node.type === 'END') continue;
    if (node.type === 'DECISION') {
      const branch: { whenTrue?: string; whenFalse?: string } = {};
      for (const { edge, index } of out) {
        if (typeof edge.when !== 'boolean') {
          diagnostics.push({
            code: 'DECISION_BRANCH_INVALID',
            message: `Edge ${index} leaves decision "${node.id}" without \`when: true\` or \`when: false\``,
            nodeId: node.id,
            path: `content.edges[${index}]`,
          });
          continue;
        }
        const key = edge.when ? 'whenTrue' : 'whenFalse';
        if (branch[key]) {
          diagnostics.push({
            code: 'DECISION_BRANCH_INVALID',
            message: `Decision "${node.id}" has more than one \`when: ${edge.when}\` edge`,
            nodeId: node.id,
            path: `content.edges[${index}]`,
          });
        } else branch[key] = edge.to;
      }
      for (const [key, when] of [
        ['whenTrue', true],
        ['whenFalse', false],
      ] as const) {
        if (!branch[key])
          diagnostics.push({
            code: 'DECISION_BRANCH_MISSING',
            message: `Decision "${node.id}" has no \`when: ${when}\` edge`,
            nodeId: node.id,
          });
      }
      branches.set(node.id, branch);
      continue;
    }
    for (const { edge, index } of out) {
      if (edge.when !== undefined) {
        diagnostics.push({
          code: 'WHEN_ON_NON_DECISION_EDGE',
          message: `Edge ${index} has \`when\` but leaves ${node.type} node "${node.id}" (only DECISION edges branch)`,
          nodeId: node.id,
          path: `content.edges[${index}].when`,
        });
      }
    }
    if (out.length === 0) {
      diagnostics.push({
        code: 'PATH_WITHOUT_END',
        message: `Node "${node.id}" has no outgoing edge: runs reaching it would not end at an END node`,
        nodeId: node.id,
      });
    } else if (out.length > 1) {
      diagnostics.push({
        code: 'MULTIPLE_OUTGOING_EDGES',
        message: `${node.type} node "${node.id}" has ${out.length} outgoing edges; only DECISION nodes branch`,
        nodeId: node.id,
      });
    } else next.set(node.id, out[0].edge.to);
  }

  const start = starts.length === 1 ? starts[0] : null;
  const successors = (id: string): string[] => (outgoing.get(id) ?? []).map((o) => o.edge.to);
  const order = start ? topologicalOrder(start.id, successors, nodes, diagnostics) : [];
  if (start) {
    const reachable = new Set<string>();
    const stack = [start.id];
    while (stack.length) {
      const id = stack.pop()!;
      if (reachable.has(id)) continue;
      reachable.add(id);
      stack.push(...successors(id));
    }
    for (const node of nodes.values()) {
      if (reachable.has(node.id)) continue;
      diagnostics.push(
        node.type === 'END'
          ? { code: 'UNREACHABLE_END', message: `END node "${node.id}" cannot be reached from START`, nodeId: node.id }
          : { code: 'UNREACHABLE_NODE', message: `Node "${node.id}" cannot be reached from START`, nodeId: node.id },
      );
    }
  }
  return { nodes, start, next, branches, predecessors, order };
}

/** Depth-first topological sort from START; reports each cycle found with the nodes on it. */
function topologicalOrder(
  startId: string,
  successors: (id: string) => string[],
  nodes: Map<string, GraphNode>,
  diagnostics: Diagnostic[],
): string[] {
  const state = new Map<string, 1 | 2>();
  const order: string[] = [];
  const path: string[] = [];
  let cyclic = false;
  const visit = (id: string): void => {
    state.set(id, 1);
    path.push(id);
    for (const to of successors(id)) {
      if (!nodes.has(to)) continue;
      const s = state.get(to);
      if (s === 1) {
        cyclic = true;
        const cycle = [...path.slice(path.indexOf(to)), to];
        diagnostics.push({ code: 'CYCLE', message: `The graph has a cycle: ${cycle.join(' → ')}`, nodeId: to });
      } else if (s === undefined) visit(to);
    }
    path.pop();
    state.set(id, 2);
    order.push(id);
  };
  visit(startId);
  return cyclic ? [] : order.reverse();
}
