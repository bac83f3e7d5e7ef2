import type { TreeModel, TreeNode } from './model-document.js';
import { unsupported } from './pmml-values.js';

/**
 * What the missing value strategies that follow several children (weightedConfidence, aggregateNodes) read of a
 * tree's nodes, checked at upload: a node they would weigh or aggregate without its counts is refused (422, naming
 * the Node by its id and its path), never scored with a guess. docs/models.md, "TreeModel".
 *
 * - weightedConfidence weighs each child it follows by its Node@recordCount: every Node but the root needs one.
 *   Its leaves give their class confidences: they need a ScoreDistribution. PMML 4.4 defines it for classes only:
 *   a regression is refused.
 * - aggregateNodes adds up the reached leaves' ScoreDistribution recordCounts (a classification: leaves need a
 *   ScoreDistribution, whose recordCount the reader always requires), or, for a regression, weighs their scores by
 *   their Node@recordCount (leaves need both).
 * With noTrueChildStrategy="returnLastPrediction" a path may also end on a node with children: then every Node
 * needs what a leaf does.
 */
export function checkTreeStrategy(m: TreeModel, path: string): void {
  const strategy = m.missingValueStrategy;
  if (strategy !== 'weightedConfidence' && strategy !== 'aggregateNodes') return;
  if (strategy === 'weightedConfidence' && m.functionName === 'regression')
    unsupported(
      path,
      'missingValueStrategy="weightedConfidence" of a regression is not supported: PMML 4.4 defines it for the confidences of classes',
    );
  const needs = (n: TreeNode, npath: string, what: string): never =>
    unsupported(
      npath,
      `missingValueStrategy="${strategy}" needs ${what}: Node ${n.id === undefined ? '(no id)' : `"${n.id}"`} has none`,
    );
  const visit = (n: TreeNode, npath: string, isRoot: boolean): void => {
    const ends = n.children.length === 0 || m.noTrueChildStrategy === 'returnLastPrediction';
    if (strategy === 'weightedConfidence' && !isRoot && n.recordCount === undefined)
      needs(n, npath, 'the recordCount of every Node but the root');
    if (ends && m.functionName === 'classification' && !n.distribution)
      needs(n, npath, `a ScoreDistribution on every ${leafWords(m)}`);
    if (ends && m.functionName === 'regression') {
      if (n.recordCount === undefined) needs(n, npath, `the recordCount of every ${leafWords(m)}`);
      if (n.score === undefined) needs(n, npath, `the score of every ${leafWords(m)}`);
    }
    n.children.forEach((c, k) => {
      visit(c, `${npath}.Node[${k}]`, false);
    });
  };
  visit(m.root, `${path}.Node`, true);
}

const leafWords = (m: TreeModel) =>
  m.noTrueChildStrategy === 'returnLastPrediction' ? 'Node (noTrueChildStrategy="returnLastPrediction")' : 'leaf Node';
