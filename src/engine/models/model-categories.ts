import type { FieldValue, ModelBody, TreeNode } from './model-document.js';

/**
 * Every category a classification can predict or give a probability of, as text: the DataDictionary's
 * (declared) first, in their order, then those the model names itself (regression tables, tree scores and
 * distributions, segments). Their positions are the indexes of the generated code's probability arrays.
 */
export function modelCategories(model: ModelBody, declared: FieldValue[] = []): string[] {
  const seen = new Set<string>(declared.map(String));
  const visit = (body: ModelBody): void => {
    if (body.kind === 'regression' && body.functionName === 'classification')
      body.tables.forEach((t) => {
        seen.add(String(t.targetCategory));
      });
    else if (body.kind === 'tree' && body.functionName === 'classification') {
      const walk = (n: TreeNode): void => {
        n.distribution?.forEach((d) => {
          seen.add(String(d.value));
        });
        if (n.score !== undefined) seen.add(String(n.score));
        n.children.forEach(walk);
      };
      walk(body.root);
    } else if (body.kind === 'mining')
      body.segments.forEach((s) => {
        visit(s.model);
      });
  };
  visit(model);
  return [...seen];
}

/**
 * Tree nodes of classifications that carry a probability per category in the generated code, counted once per
 * array: every node's result, and, under the strategies that follow several children (tree-multipath-codegen.ts),
 * the vector of each node a walk may end on (the leaves; every node under returnLastPrediction).
 */
export function classificationTreeNodes(model: ModelBody): number {
  if (model.kind === 'mining') return model.segments.reduce((sum, s) => sum + classificationTreeNodes(s.model), 0);
  if (model.kind !== 'tree' || model.functionName !== 'classification') return 0;
  const walked = model.missingValueStrategy === 'weightedConfidence' || model.missingValueStrategy === 'aggregateNodes';
  const lastPrediction = model.noTrueChildStrategy === 'returnLastPrediction';
  let count = 0;
  const walk = (n: TreeNode): void => {
    count += 1;
    if (walked && (n.children.length === 0 || lastPrediction)) count += 1;
    n.children.forEach(walk);
  };
  walk(model.root);
  return count;
}
