import type { MiningModel, ModelBody, TreeModel, TreeNode } from './model-document.js';
import { unsupported } from './pmml-values.js';

/**
 * The Segmentation methods of a classification that combine the segments' probability distributions (PMML 4.4:
 * `average`, `weightedAverage`, `max`, `median`; and this engine's `weightedMedian` of a classification) read a
 * probability per category from every segment that applies. A segment model that can answer a category without them
 * (a TreeModel leaf with a `score` and no ScoreDistribution) is refused at upload (422, naming the Segment by its id
 * and its path), never combined with a guess (a probability of 1 for its category) nor left to fail the run.
 * The votes (`majorityVote`, `weightedMajorityVote`) read the predicted category only, and `selectFirst` and
 * `modelChain` hand a segment's result on as it is: those take such segments. docs/models.md, "MiningModel".
 */
const PROBABILITY_METHODS: readonly MiningModel['multipleModelMethod'][] = [
  'average',
  'weightedAverage',
  'max',
  'median',
  'weightedMedian',
];

/** Refuses a classification segmentation combining probabilities that a segment may not give; `ids`: Segment@id. */
export function checkSegmentProbabilities(m: MiningModel, path: string, ids: (string | undefined)[]): void {
  if (m.functionName !== 'classification' || !PROBABILITY_METHODS.includes(m.multipleModelMethod)) return;
  m.segments.forEach((s, k) => {
    const gap = probabilityGap(s.model);
    if (gap === undefined) return;
    const segment = ids[k] === undefined ? '(no id)' : `"${ids[k]}"`;
    unsupported(
      `${path}.Segmentation.Segment[${k}]`,
      `multipleModelMethod="${m.multipleModelMethod}" combines the segments' probabilities: Segment ${segment} can answer without them (${gap})`,
    );
  });
}

/** Why a model body may predict without a probability per category, or undefined when it never does. */
function probabilityGap(model: ModelBody): string | undefined {
  // a Scorecard is always a regression
  if (model.functionName === 'regression') return `its ${bodyName(model)} is a regression`;
  switch (model.kind) {
    case 'regression':
      return undefined;
    case 'tree':
      return treeGap(model);
    case 'mining':
      return miningGap(model);
  }
}

function bodyName(model: ModelBody): string {
  return { regression: 'RegressionModel', tree: 'TreeModel', scorecard: 'Scorecard', mining: 'MiningModel' }[
    model.kind
  ];
}

/**
 * The first node a walk may end on whose result has no ScoreDistribution: a leaf; or, where a node's own result can
 * be the answer (returnLastPrediction with no true child, lastPrediction on an unknown predicate), any node.
 */
function treeGap(m: TreeModel): string | undefined {
  const anyNode = m.noTrueChildStrategy === 'returnLastPrediction' || m.missingValueStrategy === 'lastPrediction';
  const visit = (n: TreeNode, npath: string): string | undefined => {
    if ((n.children.length === 0 || anyNode) && !n.distribution)
      return `its TreeModel's ${npath} ${n.id === undefined ? '(no id)' : `"${n.id}"`} has ${n.score === undefined ? 'no score and' : 'a score but'} no ScoreDistribution`;
    for (const [k, c] of n.children.entries()) {
      const gap = visit(c, `${npath}.Node[${k}]`);
      if (gap !== undefined) return gap;
    }
    return undefined;
  };
  return visit(m.root, 'Node');
}

/**
 * The combining methods always give probabilities (the votes their shares); selectFirst answers any of its
 * segments' results, a model chain the result of the last segment that applied: any from the last one that always
 * applies (a True predicate) to the end.
 */
function miningGap(m: MiningModel): string | undefined {
  let answering = m.segments.map((s, k) => ({ s, k }));
  if (m.multipleModelMethod === 'modelChain') {
    const always = m.segments.map((s) => s.predicate.op === 'true').lastIndexOf(true);
    answering = answering.slice(Math.max(always, 0));
  } else if (m.multipleModelMethod !== 'selectFirst') return undefined;
  for (const { s, k } of answering) {
    const gap = probabilityGap(s.model);
    if (gap !== undefined) return `its MiningModel's (${m.multipleModelMethod}) Segment[${k}]: ${gap}`;
  }
  return undefined;
}
