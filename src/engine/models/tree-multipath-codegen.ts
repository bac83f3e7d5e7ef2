import type { TreeModel, TreeNode } from './model-document.js';
import { predicateSource } from './predicate-codegen.js';
import type { TreeSink } from './tree-codegen.js';

/**
 * The missing value strategies that follow several children (PMML 4.4, TreeModel), for tree-codegen.ts: the
 * straight-line code of the tree runs as usual, and where a predicate is unknown it hands over to the walk
 * generated here, from that node down. A function per node with children (`(X) → vector | null`), each trying its
 * children in order, three-valued: an unknown child is followed and the next children tried too, until the first
 * true one (which is followed, and ends the node's children: a record whose values were known would have taken it or
 * an earlier one); false children are skipped. What is followed combines into a vector per node:
 *
 * - weightedConfidence (classification): the class confidences of a leaf (its probabilities); at a node, those of
 *   the followed children weighted by their share of the followed children's Node@recordCount (applied at every
 *   node, so recursively). The prediction: the most confident class.
 * - aggregateNodes: the reached leaves' ScoreDistribution recordCounts, added up per category (classification:
 *   the prediction is the category of the most records, the probabilities the counts over their sum); or, for a
 *   regression, `[recordCount × score, recordCount]` added up: the reached leaves' scores averaged by their records.
 *
 * A followed child that predicts nothing (no true child below it under returnNullPrediction) is left out; a node
 * none of whose children is true or unknown does what noTrueChildStrategy says. Nothing reached: no prediction.
 * Ties between categories go to the first in the model's order. The combination is the strategy's whenever it was
 * engaged (an unknown met), even when only one leaf was reached (PMML: "the value ... with the highest recordCount
 * accumulated is predicted"), so a leaf's `score` attribute is not what it predicts then.
 */

const q = JSON.stringify;

type MultiPathTree = TreeModel & { missingValueStrategy: 'weightedConfidence' | 'aggregateNodes' };

/** The tree's missing value strategy follows several children where a predicate is unknown. */
export const followsSeveralChildren = (m: TreeModel): m is MultiPathTree =>
  m.missingValueStrategy === 'weightedConfidence' || m.missingValueStrategy === 'aggregateNodes';

export class MultiPathWalk {
  private readonly functions = new Map<TreeNode, string>();
  private readonly index = new Map<TreeNode, number>();
  private readonly vectors: string;
  private readonly add: string;
  private readonly scale: string;
  private readonly finish: string;

  constructor(
    private readonly e: TreeSink,
    private readonly m: MultiPathTree,
    nodes: TreeNode[],
  ) {
    nodes.forEach((n, k) => {
      this.index.set(n, k);
    });
    this.vectors = e.constant(`JSON.parse(${q(JSON.stringify(nodes.map((n) => this.vectorOfNode(n))))})`);
    this.add = e.constant(
      'function (P, d, k) { if (P === null) { P = new Array(d.length); for (let i = 0; i < d.length; i++) P[i] = 0; } for (let i = 0; i < d.length; i++) P[i] += k * d[i]; return P; }',
    );
    this.scale = e.constant('function (P, w) { for (let i = 0; i < P.length; i++) P[i] = P[i] / w; return P; }');
    this.finish = e.constant(this.finishSource());
  }

  /** The tree's result `{ v, p, rc } | null` when the walk starts at `n`: one of its children's predicates is unknown. */
  resultFrom(n: TreeNode): string {
    return `${this.finish}(${this.vectorAt(n)})`;
  }

  /**
   * The vector of a node's own ScoreDistribution or score, as the strategy combines them; null when it has none, or
   * when no walk ends on it (a node with children, unless noTrueChildStrategy returns its last prediction).
   */
  private vectorOfNode(n: TreeNode): number[] | null {
    if (n.children.length > 0 && this.m.noTrueChildStrategy !== 'returnLastPrediction') return null;
    if (this.m.functionName === 'regression')
      return n.score === undefined || n.recordCount === undefined
        ? null
        : [n.recordCount * Number(n.score), n.recordCount];
    if (!n.distribution) return null;
    const v = this.e.categories.map(() => 0);
    if (this.m.missingValueStrategy === 'aggregateNodes') {
      for (const d of n.distribution) v[this.e.category(d.value)!] += d.recordCount;
      return v;
    }
    // the node's confidences: its probabilities, as the path that ends in it gives them (tree-codegen's nodeResults)
    const total = n.distribution.reduce((s, d) => s + d.recordCount, 0);
    for (const d of n.distribution)
      v[this.e.category(d.value)!] = d.probability ?? (total > 0 ? d.recordCount / total : 0);
    return v;
  }

  /** `vector → { v, p, rc } | null`: the prediction from what the walk combined. */
  private finishSource(): string {
    if (this.m.functionName === 'regression')
      return 'function (P) { return P === null || !(P[1] > 0) ? null : { v: P[0] / P[1], p: null, rc: null }; }';
    const order = this.e.constant(q(this.e.categories.map((_, k) => k)));
    const scale =
      this.m.missingValueStrategy === 'aggregateNodes'
        ? 'let s = 0; for (let i = 0; i < P.length; i++) s += P[i]; if (!(s > 0)) return null;'
        : 'const s = 1;';
    return `function (P) { if (P === null) return null; ${scale} const p = new Array(P.length); for (let i = 0; i < P.length; i++) p[i] = P[i] / s; return { v: BEST(p, ${order}), p: p, rc: null }; }`;
  }

  /** An expression: the vector of the subtree at `n` (a leaf's own; a node with children, its function's). */
  private vectorAt(n: TreeNode): string {
    return n.children.length === 0 ? `${this.vectors}[${this.index.get(n)}]` : `${this.nodeFunction(n)}(X)`;
  }

  private nodeFunction(n: TreeNode): string {
    const known = this.functions.get(n);
    if (known) return known;
    const name = this.e.id('W');
    this.functions.set(n, name);
    const read = (field: string) => `X[${this.e.slot(field)}]`;
    const weighted = this.m.missingValueStrategy === 'weightedConfidence';
    // weightedConfidence: the followed children's vectors weighed by their records, over the records followed
    const end = weighted ? `(w > 0 ? ${this.scale}(P, w) : null)` : 'P';
    const lines = ['let P = null, w = 0, u = false, t, d;'];
    for (const c of n.children) {
      const k = weighted ? q(c.recordCount!) : '1';
      lines.push(
        `t = ${predicateSource(this.e, c.predicate, read)};`,
        // no unknown before it: the one path, as the straight-line code would take it
        `if (t === true && !u) return ${this.vectorAt(c)};`,
        `if (t !== false) { u = true; d = ${this.vectorAt(c)}; if (d !== null) { P = ${this.add}(P, d, ${k}); w += ${k}; } if (t === true) return ${end}; }`,
      );
    }
    const noTrueChild =
      this.m.noTrueChildStrategy === 'returnLastPrediction' ? `${this.vectors}[${this.index.get(n)}]` : 'null';
    lines.push(`return u ? ${end} : ${noTrueChild};`);
    this.e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
    return name;
  }
}
