import type { FieldValue, TreeModel, TreeNode } from './model-document.js';
import { type FieldRead, predicateSource, truthSource, unknownSource } from './predicate-codegen.js';
import { MultiPathWalk, followsSeveralChildren } from './tree-multipath-codegen.js';

/**
 * A PMML TreeModel as straight-line JavaScript, for model-codegen.ts: the whole tree one labelled block of nested
 * `if`s over local variables (each field read from X once), its predicates in line, each leaf setting `v` and
 * leaving the block. A function per node, as before, cost a 100-tree ensemble most of its time in calls.
 *
 * PMML 4.4 semantics: a node's children are tried in order and the first whose predicate is true is taken; a
 * predicate that is unknown (it reads a missing value) does what missingValueStrategy says: `none` takes it as
 * false, `lastPrediction` answers the node's own result, `nullPrediction` no result, `defaultChild` goes down the
 * node's defaultChild, `weightedConfidence` and `aggregateNodes` hand over to the walk of several children from that
 * node down (tree-multipath-codegen.ts). No true child answers the node's result (returnLastPrediction) or none.
 */

const q = JSON.stringify;

/** What of model-codegen's emitter a tree (and its multi-path walk) uses. */
export interface TreeSink {
  readonly categories: string[];
  readonly parts: string[];
  id(prefix: string): string;
  slot(field: string): number;
  category(value: FieldValue): number | undefined;
  constant(source: string): string;
}

/** The local variables a block of trees reads, each declared once: `const f3 = X[3]`. */
export class FieldLocals {
  private readonly used = new Set<number>();
  constructor(private readonly e: TreeSink) {}

  readonly read: FieldRead = (field) => {
    const slot = this.e.slot(field);
    this.used.add(slot);
    return `f${slot}`;
  };

  declarations(): string {
    return this.used.size === 0 ? '' : `const ${[...this.used].map((s) => `f${s} = X[${s}]`).join(', ')};`;
  }
}

/**
 * Tree nodes per generated function, at most: V8 optimises functions up to a bytecode size, and compiles each lazily
 * on its first call, so a large tree is cut into functions of subtrees (a first run then compiles only those on
 * its path, not the whole tree). Also what ensembles pack their trees into functions by.
 */
export const NODES_PER_FUNCTION = 400;

/**
 * Statements that set `v` to the tree's result, as `leaf` writes a node's result, and leave the block
 * `label`. The caller declares `let v`. Subtrees past NODES_PER_FUNCTION go to functions of their own.
 * `multiPath`: the tree's result, as `leaf` writes it, when a predicate under the node is unknown; what
 * weightedConfidence and aggregateNodes need (treeFunction gives it; the ensembles that add trees in line take none
 * of these trees).
 */
export function treeStatements(
  e: TreeSink,
  m: TreeModel,
  read: FieldRead,
  leaf: (n: TreeNode) => string,
  label: string,
  multiPath?: (n: TreeNode) => string,
): string {
  const sizes = new Map<TreeNode, number>();
  const size = (n: TreeNode): number => {
    let total = 1;
    for (const c of n.children) total += size(c);
    sizes.set(n, total);
    return total;
  };
  size(m.root);
  const walk =
    multiPath ??
    (() => {
      throw new Error(`missingValueStrategy "${m.missingValueStrategy}" needs the walk of several children`);
    });
  return subtreeBlock(e, m, { read, leaf, sizes, multiPath: walk }, m.root, label, true);
}

interface TreeEmit {
  read: FieldRead;
  leaf: (n: TreeNode) => string;
  sizes: Map<TreeNode, number>;
  multiPath: (n: TreeNode) => string;
}

/** The labelled block of the subtree at `top`: children fit in while the function's node budget lasts. */
function subtreeBlock(e: TreeSink, m: TreeModel, t: TreeEmit, top: TreeNode, label: string, isRoot: boolean): string {
  const { read, leaf } = t;
  const set = (value: string) => `v = ${value}; break ${label};`;
  const lines: string[] = [];
  let budget = NODES_PER_FUNCTION - 1;
  const descend = (c: TreeNode): void => {
    const size = t.sizes.get(c)!;
    if (size > budget) {
      lines.push(set(`${subtreeFunction(e, m, t, c)}(X)`));
      return;
    }
    budget -= size;
    node(c);
  };
  const node = (n: TreeNode): void => {
    if (n.children.length === 0) {
      lines.push(set(leaf(n)));
      return;
    }
    if (m.missingValueStrategy === 'defaultChild') defaultChildNode(n);
    else {
      const onUnknown = unknownResult(n);
      for (const c of n.children) {
        const unknown = onUnknown === null ? 'false' : unknownSource(c.predicate, read);
        if (unknown === undefined) {
          // a compound predicate: its three-valued value, once
          lines.push(`{ const t = ${predicateSource(e, c.predicate, read)};`);
          lines.push(`if (t === null) { ${set(onUnknown!)} }`, 'if (t === true) {');
          descend(c);
          lines.push('} }');
          continue;
        }
        if (unknown !== 'false') lines.push(`if (${unknown}) { ${set(onUnknown!)} }`);
        lines.push(`if (${truthSource(e, c.predicate, read)}) {`);
        descend(c);
        lines.push('}');
      }
      lines.push(noTrueChild(n));
    }
  };
  // The child to go down is chosen first, so that the default child's code is written once, not once per sibling.
  const defaultChildNode = (n: TreeNode): void => {
    const d = n.children.indexOf(n.children.find((c) => c.id === n.defaultChild)!);
    lines.push('{ let c = -1;');
    let close = '';
    n.children.forEach((c, k) => {
      const unknown = unknownSource(c.predicate, read);
      if (unknown === undefined) {
        lines.push(
          `{ const t = ${predicateSource(e, c.predicate, read)}; if (t === null) c = ${d}; else if (t === true) c = ${k}; else {`,
        );
        close += '} }';
      } else {
        if (unknown !== 'false') lines.push(`if (${unknown}) c = ${d}; else`);
        lines.push(`if (${truthSource(e, c.predicate, read)}) c = ${k}; else {`);
        close += '}';
      }
    });
    lines.push(close);
    n.children.forEach((c, k) => {
      lines.push(`if (c === ${k}) {`);
      descend(c);
      lines.push('}');
    });
    lines.push(`${noTrueChild(n)} }`);
  };
  const noTrueChild = (n: TreeNode) => set(m.noTrueChildStrategy === 'returnLastPrediction' ? leaf(n) : 'null');
  /** What a node answers when one of its children's predicates is unknown (null: the child counts as false). */
  const unknownResult = (n: TreeNode): string | null => {
    switch (m.missingValueStrategy) {
      case 'none':
        return null;
      case 'lastPrediction':
        return leaf(n);
      case 'weightedConfidence':
      case 'aggregateNodes':
        return t.multiPath(n);
      default:
        return 'null';
    }
  };

  lines.push(`${label}: {`);
  if (!isRoot || top.predicate.op === 'true') node(top);
  else {
    // the root's own predicate: not true, no prediction (a subtree's predicate was tested by its parent); unknown,
    // the strategies that follow what is unknown follow it
    if (followsSeveralChildren(m))
      lines.push(`if (${predicateSource(e, top.predicate, read)} === null) { ${set(t.multiPath(top))} }`);
    lines.push(`if (${truthSource(e, top.predicate, read)}) {`);
    node(top);
    lines.push('}', set('null'));
  }
  lines.push('}');
  return lines.join('\n');
}

/** Emits a function `(X) → the subtree's result` (as `leaf` writes it); returns its name. */
function subtreeFunction(e: TreeSink, m: TreeModel, t: TreeEmit, top: TreeNode): string {
  const name = e.id('N');
  const locals = new FieldLocals(e);
  const body = subtreeBlock(e, m, { ...t, read: locals.read }, top, 'L', false);
  e.parts.push(`function ${name}(X) {\n${locals.declarations()}\nlet v;\n${body}\nreturn v;\n}`);
  return name;
}

/** The result `{ v, p, rc }` of every node, by its position in a depth-first walk (null: the node predicts nothing). */
function nodeResults(e: TreeSink, m: TreeModel, nodes: TreeNode[]) {
  return nodes.map((n) => {
    if (m.functionName === 'regression') return n.score === undefined ? null : { v: n.score, p: null, rc: null };
    let p: number[] | null = null;
    if (n.distribution) {
      const total = n.distribution.reduce((s, d) => s + d.recordCount, 0);
      p = e.categories.map(() => 0);
      for (const d of n.distribution)
        p[e.category(d.value)!] = d.probability ?? (total > 0 ? d.recordCount / total : 0);
    }
    let v = n.score !== undefined ? e.category(n.score)! : -1;
    if (v < 0 && p) {
      // the most probable category of the distribution, ties to the first listed (categories it leaves out have 0)
      for (const d of n.distribution!) {
        const c = e.category(d.value)!;
        if (v < 0 || p[c] > p[v]) v = c;
      }
    }
    return v < 0 ? null : { v, p, rc: null };
  });
}

function depthFirst(root: TreeNode): TreeNode[] {
  const nodes: TreeNode[] = [];
  const visit = (n: TreeNode): void => {
    nodes.push(n);
    n.children.forEach(visit);
  };
  visit(root);
  return nodes;
}

/** The number of nodes of a tree: what the ensembles' code is cut into functions by. */
export function treeSize(m: TreeModel): number {
  return depthFirst(m.root).length;
}

/** Emits a function `(X) → { v, p, rc } | null` for the tree; returns its name. */
export function treeFunction(e: TreeSink, m: TreeModel): string {
  const name = e.id('T');
  const nodes = depthFirst(m.root);
  const index = new Map(nodes.map((n, k) => [n, k]));
  const results = e.constant(`JSON.parse(${q(JSON.stringify(nodeResults(e, m, nodes)))})`);
  const locals = new FieldLocals(e);
  const walk = followsSeveralChildren(m) ? new MultiPathWalk(e, m, nodes) : undefined;
  const body = treeStatements(
    e,
    m,
    locals.read,
    (n) => `${results}[${index.get(n)}]`,
    'L',
    walk && ((n) => walk.resultFrom(n)),
  );
  e.parts.push(`function ${name}(X) {\n${locals.declarations()}\nlet v;\n${body}\nreturn v;\n}`);
  return name;
}

/**
 * A regression tree's leaf as a number: its score, or null when it has none (the ensemble then predicts
 * nothing). Fed to treeStatements by the ensembles that sum trees without building a result per tree.
 */
export function scoreLeaf(n: TreeNode): string {
  return n.score === undefined ? 'null' : q(n.score);
}
