/**
 * The Segmentation methods that combine the applying segments' results by order statistics or weights
 * (`median`, `weightedMedian`, `max`, `weightedSum`), for model-codegen.ts. PMML 4.4, "Multiple Models":
 *
 * - Regression: `median` of the predictions (an even count: the mean of the two middle ones); `weightedMedian`,
 *   the prediction at which the predictions sorted ascending first reach half the total weight (a "whole" median:
 *   always one segment's prediction); `weightedSum`, Σ weight × prediction. `max` is for classifications.
 * - Classification: per category, the `max` / `median` / `weightedMedian` of the segments' probabilities; the
 *   winning category is the one whose combined probability is highest (ties: the model's category order). The
 *   probabilities are the average of the probabilities of the segments that contributed the winner's combined
 *   value: those whose probability of it equals it (`max`, `weightedMedian`, `median` of an odd count), or, for
 *   the `median` of an even count, equals one of the two middle values it averages.
 *   `weightedSum` is for regressions.
 *
 * Helpers emitted once per program that uses them; the segments' results are gathered into arrays first (`R`
 * the results, `W` the weights), as these methods need them all before combining.
 */

export type OrderStatisticMethod = 'median' | 'weightedMedian' | 'max' | 'weightedSum';

/** `MED(values)`, `WMED(values, weights)`: the median and the weighted ("whole") median of numbers. */
export const ORDER_STATISTICS_RUNTIME = `function MED(a) { const s = a.slice().sort((x, y) => x - y); const h = s.length >> 1; return s.length % 2 === 1 ? s[h] : (s[h - 1] + s[h]) / 2; }
function WMED(a, w) { const k = a.map((_, i) => i).sort((i, j) => a[i] - a[j]); let t = 0; for (let i = 0; i < w.length; i++) t += w[i]; const half = 0.5 * t; let c = 0; for (const i of k) { c += w[i]; if (c >= half) return a[i]; } return a[k[k.length - 1]]; }
function PCOMB(R, W, method, order) {
  const n = R.length, C = R[0].p.length, chosen = new Array(C);
  const column = (c) => { const v = new Array(n); for (let k = 0; k < n; k++) v[k] = R[k].p[c]; return v; };
  for (let c = 0; c < C; c++) chosen[c] = method === 0 ? Math.max(...column(c)) : method === 1 ? MED(column(c)) : WMED(column(c), W);
  const win = BEST(chosen, order);
  // the segments that contributed the winner's value: equal to it, or (an even median) one of the two middle ones
  let lo = chosen[win], hi = lo;
  if (method === 1 && n % 2 === 0) { const s = column(win).sort((x, y) => x - y); lo = s[n / 2 - 1]; hi = s[n / 2]; }
  const p = new Array(C).fill(0);
  let m = 0;
  for (let k = 0; k < n; k++) {
    const x = R[k].p[win];
    if (x < lo || x > hi) continue;
    m++;
    for (let c = 0; c < C; c++) p[c] += R[k].p[c];
  }
  for (let c = 0; c < C; c++) p[c] = p[c] / m;
  return { v: win, p: p, rc: null };
}`;

/** The statements after `R` and `W` are gathered (at least one segment applied): the combined result. */
export function orderStatisticReturn(
  method: OrderStatisticMethod,
  functionName: 'regression' | 'classification',
  order: string,
): string {
  if (functionName === 'classification') {
    const code = { max: 0, median: 1, weightedMedian: 2, weightedSum: -1 }[method];
    return `return PCOMB(R, W, ${code}, ${order});`;
  }
  switch (method) {
    case 'weightedSum':
      return 'let t = 0; for (let k = 0; k < R.length; k++) t += W[k] * R[k].v; return { v: t, p: null, rc: null };';
    case 'median':
      return 'return { v: MED(R.map((r) => r.v)), p: null, rc: null };';
    case 'weightedMedian':
      return 'return { v: WMED(R.map((r) => r.v), W), p: null, rc: null };';
    case 'max':
      throw new Error('max combines the probabilities of a classification');
  }
}
