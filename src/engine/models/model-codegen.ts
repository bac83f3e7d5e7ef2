import type {
  FieldValue,
  MiningModel,
  MiningSegment,
  ModelBody,
  ModelInputField,
  ModelOutputField,
  PmmlModelDocument,
  RegressionModel,
  ScorecardModel,
  TreeModel,
} from './model-document.js';
import { modelCategories } from './model-categories.js';
import { type FieldRead, PREDICATE_RUNTIME, truthSource } from './predicate-codegen.js';
import { FieldLocals, NODES_PER_FUNCTION, scoreLeaf, treeFunction, treeSize, treeStatements } from './tree-codegen.js';
import { derivedStatements, expressionSource, targetsFunction } from './transformation-codegen.js';
import { NORMAL_SOURCE } from './normal-distribution.js';
import { ORDER_STATISTICS_RUNTIME, orderStatisticReturn } from './segment-order-statistics.js';
import { MissingPredictions } from './segment-missing-predictions.js';

/**
 * A model as JavaScript for the tenant's sandbox: one generated function per model body (a tree is one function of
 * nested ifs, tree-codegen.ts; the trees an ensemble adds up are added in line), all data as JSON literals, so a
 * model file can never inject code. The generated program follows PMML 4.4:
 * three-valued predicates (a comparison with a missing value is unknown), MiningSchema missing and invalid
 * value treatment, then the model, then the Output fields asked for.
 *
 * Everything keyed by model data is an array indexed at compile time, never an object keyed by a name:
 * field values are `X[slot]`, probabilities `p[category index]`. Arrays keep V8 on its fast paths (a
 * dictionary object per run cost a random forest most of its speed), and a category or field named
 * "constructor" or "__proto__" is an index like any other.
 *
 * A result inside is `{ v, p, rc }`: `v` the prediction (a number for a regression; the category's index for a
 * classification), `p` the probabilities by category index (classification) or null, `rc` the ranked reason
 * codes (scorecard) or null; or null itself when the model predicts nothing (a missing value a regression
 * needs, a tree with no true child…).
 */

const q = JSON.stringify;
/** A JSON value as source that evaluates to it, whatever its keys (`__proto__` included). */
const data = (value: unknown) => `JSON.parse(${q(JSON.stringify(value))})`;

/** Where the node reads each model input from: a JavaScript expression over `$$vars` per field name. */
export interface ModelFunctionOptions {
  reads: Record<string, string>;
  outputs: string[];
  nodeId: string;
}

class Emitter {
  readonly parts: string[] = [];
  private next = 0;
  private readonly slots = new Map<string, number>();
  private readonly categoryIndex: Map<string, number>;
  private readonly emitted = new Set<string>();

  constructor(readonly categories: string[]) {
    this.categoryIndex = new Map(categories.map((c, k) => [c, k]));
  }

  id(prefix: string): string {
    return `${prefix}${this.next++}`;
  }
  /** The index of a field in X (inputs first, then what a model chain outputs). */
  slot(field: string): number {
    let slot = this.slots.get(field);
    if (slot === undefined) {
      slot = this.slots.size;
      this.slots.set(field, slot);
    }
    return slot;
  }
  get slotCount(): number {
    return this.slots.size;
  }
  category(value: FieldValue): number | undefined {
    return this.categoryIndex.get(String(value));
  }
  /** Source the program needs once, however many of its models use it (helper functions). */
  once(source: string): void {
    if (this.emitted.has(source)) return;
    this.emitted.add(source);
    this.parts.push(source);
  }
  /** A constant of the program (hoisted out of the functions that use it). */
  constant(source: string): string {
    const name = this.id('C');
    this.parts.push(`const ${name} = ${source};`);
    return name;
  }
}

/**
 * `(function () { …; return function ($$vars) → [output values in the order of options.outputs] })()`.
 * `rt.err` (the sandbox runtime's error) reports an invalid input under returnInvalid.
 */
export function modelFunction(doc: PmmlModelDocument, options: ModelFunctionOptions): string {
  const categories = modelCategories(doc.model, doc.targetCategories);
  const e = new Emitter(categories);
  doc.inputs.forEach((input) => {
    e.slot(input.name);
  });
  const derived = derivedStatements(e, options.nodeId, doc.derived ?? [], [doc.model, doc.outputExpressions ?? []]);
  const inner = body(e, doc.model, options.nodeId);
  const main = doc.targets ? targetsFunction(e, doc.targets, inner, doc.functionName) : inner;
  const typed = new Map((doc.targetCategories ?? []).map((c) => [String(c), c]));
  const prepFns = doc.inputs.map((input, k) => prepareFunction(e, `P${k}`, input, options.nodeId));
  let results: string[] = [];
  let values: string[];
  if (doc.outputExpressions) {
    // transformedValue outputs read the outputs before them: every output goes to its slot, in order
    const expressions = outputExpressions(e, options.nodeId, doc.outputExpressions);
    results = doc.outputs.map((o) => `X[${e.slot(o.name)}] = ${outputValue(e, o, doc.functionName, expressions)};`);
    values = options.outputs.map((name) => `X[${e.slot(name)}]`);
  } else {
    const byName = new Map(doc.outputs.map((o) => [o.name, o]));
    values = options.outputs.map((name) => outputValue(e, byName.get(name)!, doc.functionName));
  }
  const slots = Array.from({ length: e.slotCount }, (_, k) =>
    k < doc.inputs.length ? `P${k}(${options.reads[doc.inputs[k].name] ?? 'undefined'})` : 'null',
  );
  return `(function () {
const TYPED = ${data(categories.map((c) => typed.get(c) ?? c))};
${PREDICATE_RUNTIME}
function BEST(p, order) { let b = -1; for (let k = 0; k < order.length; k++) { const i = order[k]; if (b < 0 || p[i] > p[b]) b = i; } return b; }
function ZEROS() { const p = new Array(${categories.length}); for (let k = 0; k < ${categories.length}; k++) p[k] = 0; return p; }
${prepFns.join('\n')}
${e.parts.join('\n')}
return function ($$vars) {
const X = [${slots.join(', ')}];
${derived
  .map(
    (d) => `${d}
`,
  )
  .join('')}const r = ${main}(X);
${results
  .map(
    (d) => `${d}
`,
  )
  .join('')}return [${values.join(', ')}];
};
})()`;
}

/** The expression of each transformedValue output, as JavaScript over X. */
function outputExpressions(
  e: Emitter,
  nodeId: string,
  list: { output: string; expression: Parameters<typeof expressionSource>[2] }[],
): Map<string, string> {
  return new Map(
    list.map((o) => [o.output, expressionSource(e, { nodeId, what: `output "${o.output}"` }, o.expression)]),
  );
}

function outputValue(
  e: Emitter,
  o: ModelOutputField,
  functionName: 'regression' | 'classification',
  expressions: Map<string, string> = new Map(),
): string {
  switch (o.feature) {
    case 'transformedValue':
      return expressions.get(o.name) ?? 'null';
    case 'predictedValue':
      return functionName === 'classification' ? '(r === null ? null : TYPED[r.v])' : '(r === null ? null : r.v)';
    case 'probability': {
      if (o.value === undefined) return '(r === null || !r.p ? null : r.p[r.v])';
      const index = e.category(o.value);
      return index === undefined ? '(r === null || !r.p ? null : 0)' : `(r === null || !r.p ? null : r.p[${index}])`;
    }
    case 'reasonCode':
      return `(r === null || !r.rc || r.rc[${(o.rank ?? 1) - 1}] === undefined ? null : r.rc[${(o.rank ?? 1) - 1}])`;
  }
}

/** MiningSchema treatment of one input: a value of the field's type, or null for missing. */
function prepareFunction(e: Emitter, name: string, input: ModelInputField, nodeId: string): string {
  const numeric = input.dataType !== 'string' && input.dataType !== 'boolean';
  const missing = input.missingValueReplacement !== undefined ? q(input.missingValueReplacement) : 'null';
  const lines = [
    'let x = raw;',
    `if (x === undefined || x === null || (typeof x === "number" && x !== x)) return ${missing};`,
    'let ok = true;',
  ];
  // DataDictionary Values with property="missing" stand for a missing value (a string field compares numbers and
  // booleans as their text, as below).
  if (input.missingValues)
    lines.push(
      `if (${e.constant(data(input.missingValues))}.includes(${numeric || input.dataType === 'boolean' ? 'x' : '(typeof x === "number" || typeof x === "boolean" ? String(x) : x)'})) return ${missing};`,
    );
  if (numeric) {
    lines.push(
      `if (typeof x !== "number" || !isFinite(x)${input.dataType === 'integer' ? ' || x % 1 !== 0' : ''}) ok = false;`,
    );
    if (input.intervals) {
      const tests = input.intervals.map((i) => {
        const parts = ['true'];
        if (i.min !== undefined) parts.push(`x ${i.minClosed ? '>=' : '>'} ${q(i.min)}`);
        if (i.max !== undefined) parts.push(`x ${i.maxClosed ? '<=' : '<'} ${q(i.max)}`);
        return `(${parts.join(' && ')})`;
      });
      lines.push(`else if (!(${tests.join(' || ')})) ok = false;`);
    }
  } else if (input.dataType === 'boolean') {
    lines.push('if (typeof x !== "boolean") ok = false;');
  } else {
    // numbers and booleans given for a string field compare as their text, as PMML's string conversion does
    lines.push(
      'if (typeof x === "number" || typeof x === "boolean") x = String(x); else if (typeof x !== "string") ok = false;',
    );
  }
  if (input.values && input.optype !== 'continuous')
    lines.push(`if (ok && !${e.constant(data(input.values))}.includes(x)) ok = false;`);
  if (input.invalidValues) lines.push(`if (ok && ${e.constant(data(input.invalidValues))}.includes(x)) ok = false;`);
  switch (input.invalidValueTreatment) {
    case 'returnInvalid':
      lines.push(
        `if (!ok) throw rt.err("MODEL_INPUT_INVALID", ${q(`model input "${input.name}" of node '${nodeId}' is invalid: `)} + (typeof x === "string" ? JSON.stringify(x) : String(x)) + ${q(describe(input))});`,
      );
      break;
    case 'asMissing':
      lines.push(`if (!ok) return ${missing};`);
      break;
    case 'asValue':
      lines.push(`if (!ok) return ${q(input.invalidValueReplacement)};`);
      break;
    case 'asIs':
      lines.push(`if (!ok && typeof x === "object") return ${missing};`);
      break;
  }
  // MiningSchema outliers: a valid value past a bound is missing, or the bound itself.
  if (input.outliers) {
    const { treatment, low, high } = input.outliers;
    const past = (bound: number) => (treatment === 'asMissingValues' ? missing : q(bound));
    if (low !== undefined) lines.push(`if (ok && x < ${q(low)}) return ${past(low)};`);
    if (high !== undefined) lines.push(`if (ok && x > ${q(high)}) return ${past(high)};`);
  }
  lines.push('return x;');
  return `function ${name}(raw) {\n${lines.join('\n')}\n}`;
}

function describe(input: ModelInputField): string {
  if (input.values && input.optype !== 'continuous')
    return ` (valid: ${input.values.map((v) => String(v)).join(', ')})`;
  if (input.intervals) return ' (outside its valid intervals, or not a number)';
  return ` (expected ${input.dataType})`;
}

/** Reads a field from the model's field array, where it is read once per use (segment and attribute predicates). */
const fromX =
  (e: Emitter): FieldRead =>
  (field) =>
    `X[${e.slot(field)}]`;

/** A RegressionModel's normalization of one value `y` (PMML 4.4), as an expression; `normalCdf` names NORMAL_SOURCE. */
function link(method: RegressionModel['normalizationMethod'], y: string, normalCdf: () => string): string {
  switch (method) {
    case 'none':
    case 'simplemax':
      return y;
    case 'exp':
      return `Math.exp(${y})`;
    case 'logit':
    case 'softmax':
      return `1 / (1 + Math.exp(-${y}))`;
    case 'probit':
      return `${normalCdf()}.cdf(${y})`;
    case 'cloglog':
      return `1 - Math.exp(-Math.exp(${y}))`;
    case 'loglog':
      return `Math.exp(-Math.exp(-${y}))`;
    case 'cauchit':
      return `0.5 + Math.atan(${y}) / Math.PI`;
  }
}

/** Emits the function(s) of a model body; returns the name of the one to call with X. */
function body(e: Emitter, model: ModelBody, nodeId: string): string {
  switch (model.kind) {
    case 'regression':
      return regression(e, model);
    case 'tree':
      return treeFunction(e, model);
    case 'scorecard':
      return scorecard(e, model);
    case 'mining':
      return mining(e, model, nodeId);
  }
}

/** A segment's model with its LocalTransformations computed first and its Targets applied after. */
function segmentFunction(e: Emitter, s: MiningSegment, nodeId: string): string {
  const derived = derivedStatements(e, nodeId, s.derived ?? [], [s.model, s.outputExpressions ?? []]);
  const inner = body(e, s.model, nodeId);
  const main = s.targets ? targetsFunction(e, s.targets, inner, s.model.functionName) : inner;
  if (derived.length === 0) return main;
  const name = e.id('G');
  e.parts.push(`function ${name}(X) {\n${derived.join('\n')}\nreturn ${main}(X);\n}`);
  return name;
}

/** Category indexes in tie-breaking order: the model's own order (its tables, its distribution), then the rest. */
function tieOrder(e: Emitter, own: FieldValue[]): number[] {
  const first = own.map((c) => e.category(c)!);
  return [...new Set([...first, ...e.categories.map((_, k) => k)])];
}

function regression(e: Emitter, m: RegressionModel): string {
  const name = e.id('R');
  const used = [
    ...new Set(m.tables.flatMap((t) => [...t.numeric.map((n) => n.field), ...t.categorical.map((c) => c.field)])),
  ];
  const lines = used.map((field, k) => `const a${k} = X[${e.slot(field)}]; if (a${k} === null) return null;`);
  const local = new Map(used.map((field, k) => [field, `a${k}`]));
  m.tables.forEach((t, j) => {
    const terms = [q(t.intercept)];
    for (const n of t.numeric)
      terms.push(
        n.exponent === 1
          ? `${q(n.coefficient)} * ${local.get(n.field)}`
          : `${q(n.coefficient)} * Math.pow(${local.get(n.field)}, ${q(n.exponent)})`,
      );
    for (const c of t.categorical) terms.push(`(${local.get(c.field)} === ${q(c.value)} ? ${q(c.coefficient)} : 0)`);
    lines.push(`const y${j} = ${terms.join(' + ')};`);
  });
  let cdf: string | undefined;
  const normalCdf = () => (cdf ??= e.constant(NORMAL_SOURCE));
  if (m.functionName === 'regression') {
    // softmax of one value is the logistic function (PMML 4.4, RegressionModel); simplemax is refused by the reader.
    const norm = link(m.normalizationMethod === 'softmax' ? 'logit' : m.normalizationMethod, 'y0', normalCdf);
    lines.push(`return { v: ${norm}, p: null, rc: null };`);
  } else {
    const index = m.tables.map((t) => e.category(t.targetCategory!)!);
    const n = index.length;
    const last = n - 1;
    const ys = index.map((_, j) => `y${j}`);
    if (m.normalizationMethod === 'softmax') {
      lines.push(`const mx = Math.max(${ys.join(', ')});`);
      index.forEach((_, j) => {
        lines.push(`const e${j} = Math.exp(y${j} - mx);`);
      });
      lines.push(`const t = ${index.map((_, j) => `e${j}`).join(' + ')};`);
      lines.push('const p = ZEROS();', ...index.map((c, j) => `p[${c}] = e${j} / t;`));
    } else if (m.normalizationMethod === 'simplemax') {
      lines.push(`const t = ${ys.join(' + ')};`);
      lines.push('const p = ZEROS();', ...index.map((c, j) => `p[${c}] = y${j} / t;`));
    } else {
      // logit, probit, cloglog, loglog, cauchit and none: each category but the last through the link, the last gets
      // what the others leave (PMML 4.4, RegressionModel).
      const f = (j: number) => link(m.normalizationMethod, `y${j}`, normalCdf);
      index.slice(0, last).forEach((_, j) => {
        lines.push(`const p${j} = ${f(j)};`);
      });
      lines.push(
        `const p${last} = 1 - (${
          n > 1
            ? index
                .slice(0, last)
                .map((_, j) => `p${j}`)
                .join(' + ')
            : '0'
        });`,
      );
      lines.push('const p = ZEROS();', ...index.map((c, j) => `p[${c}] = p${j};`));
    }
    const order = e.constant(
      q(
        tieOrder(
          e,
          m.tables.map((t) => t.targetCategory!),
        ),
      ),
    );
    lines.push(`return { v: BEST(p, ${order}), p: p, rc: null };`);
  }
  e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
  return name;
}

function scorecard(e: Emitter, m: ScorecardModel): string {
  const name = e.id('S');
  const codes = [
    ...new Set(m.characteristics.flatMap((c) => c.attributes.map((a) => (a.reasonCode ?? c.reasonCode)!))),
  ];
  const lines = [`let s = ${q(m.initialScore)};`];
  if (m.useReasonCodes) lines.push(`const L = [${codes.map(() => '0').join(', ')}];`);
  m.characteristics.forEach((c) => {
    lines.push('{');
    c.attributes.forEach((a, j) => {
      const code = codes.indexOf((a.reasonCode ?? c.reasonCode)!);
      const points =
        m.reasonCodeAlgorithm === 'pointsBelow'
          ? (c.baselineScore ?? 0) - a.partialScore
          : a.partialScore - (c.baselineScore ?? 0);
      const reason = m.useReasonCodes ? ` L[${code}] += ${q(points)};` : '';
      lines.push(
        `${j === 0 ? '' : 'else '}if (${truthSource(e, a.predicate, fromX(e))}) { s += ${q(a.partialScore)};${reason} }`,
      );
    });
    // PMML: a characteristic none of whose attributes is true makes the score invalid.
    lines.push('else return null;', '}');
  });
  if (m.useReasonCodes) {
    // Codes with positive points, most first; equal points keep the order of first appearance (selection of the largest, first wins).
    lines.push(`const CODES = ${data(codes)};`, 'const rc = [];');
    lines.push(
      `for (;;) { let b = -1; for (let k = 0; k < ${codes.length}; k++) if (L[k] > 0 && (b < 0 || L[k] > L[b])) b = k; if (b < 0) break; rc.push(CODES[b]); L[b] = 0; }`,
    );
    lines.push('return { v: s, p: null, rc: rc };');
  } else lines.push('return { v: s, p: null, rc: null };');
  e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
  return name;
}

/**
 * A segment that a sum, average or weightedAverage of a regression adds in line (see treeSums): a regression tree
 * that always applies and follows one child at a time, with no transformations or Targets of its own. Gradient
 * boosting and random forests, as exporters write them, are made of these.
 */
function inlineTree(m: MiningModel, s: MiningSegment): s is MiningSegment & { model: TreeModel } {
  return (
    m.functionName === 'regression' &&
    s.predicate.op === 'true' &&
    s.model.kind === 'tree' &&
    s.model.functionName === 'regression' &&
    // a walk of several children answers a vector, not a score to add
    s.model.missingValueStrategy !== 'aggregateNodes' &&
    (s.derived ?? []).length === 0 &&
    s.targets === undefined
  );
}

/**
 * Statements adding consecutive inline trees (inlineTree) to `t`, `n` and `w` of a sum-like segmentation, in the
 * order and with the arithmetic of one segment at a time: the trees are cut into functions `(X, t) → t`, each
 * reading its fields once and adding its trees' scores in line; null when a tree predicts nothing.
 */
function treeSums(e: Emitter, trees: (MiningSegment & { model: TreeModel })[], weighted: boolean): string[] {
  const lines: string[] = [];
  for (let first = 0; first < trees.length; ) {
    let last = first;
    let nodes = treeSize(trees[first].model);
    while (last + 1 < trees.length && nodes + treeSize(trees[last + 1].model) <= NODES_PER_FUNCTION)
      nodes += treeSize(trees[++last].model);
    const chunk = trees.slice(first, last + 1);
    const name = e.id('K');
    const locals = new FieldLocals(e);
    const body = chunk.map((s, k) => {
      const add = weighted ? `${q(s.weight)} * v` : 'v';
      return `${treeStatements(e, s.model, locals.read, scoreLeaf, `L${k}`)}\nif (v === null) return null; t += ${add};`;
    });
    e.parts.push(`function ${name}(X, t) {\n${locals.declarations()}\nlet v;\n${body.join('\n')}\nreturn t;\n}`);
    lines.push(
      `t = ${name}(X, t); if (t === null) return null; n += ${chunk.length};`,
      weighted ? chunk.map((s) => `w += ${q(s.weight)};`).join(' ') : `w += ${chunk.length};`,
    );
    first = last + 1;
  }
  return lines;
}

function mining(e: Emitter, m: MiningModel, nodeId: string): string {
  const name = e.id('M');
  const voting = m.multipleModelMethod === 'majorityVote' || m.multipleModelMethod === 'weightedMajorityVote';
  const missing = new MissingPredictions(m, voting);
  const sumLike = ['sum', 'average', 'weightedAverage'].includes(m.multipleModelMethod);
  const segs = m.segments.map((s) => ({
    // trees added in line stop the sum at a missing score: skipSegment leaves each segment's result out by itself
    fn: sumLike && !missing.skips && inlineTree(m, s) ? null : segmentFunction(e, s, nodeId),
    segment: s,
    predicate: truthSource(e, s.predicate, fromX(e)),
    weight: s.weight,
    outputs: s.outputs,
    functionName: s.model.functionName,
    expressions: outputExpressions(e, nodeId, s.outputExpressions ?? []),
  }));
  const order = e.constant(q(e.categories.map((_, k) => k)));
  const lines: string[] = [];
  switch (m.multipleModelMethod) {
    case 'selectFirst':
      segs.forEach((s) => {
        lines.push(
          missing.skips
            ? `if (${s.predicate}) { const r = ${s.fn}(X); if (r !== null) return r; }`
            : `if (${s.predicate}) return ${s.fn}(X);`,
        );
      });
      lines.push('return null;');
      break;
    case 'modelChain': {
      lines.push('X = X.slice();', 'let r = null;');
      // continue passes a segment's missing outputs on to the later segments; returnMissing ends the chain there
      const stop = missing.treatment === 'returnMissing' ? ' if (r === null) return null;' : '';
      segs.forEach((s) => {
        const assigns = s.outputs
          .map((o) => `X[${e.slot(o.name)}] = ${outputValue(e, o, s.functionName, s.expressions)};`)
          .join(' ');
        lines.push(`if (${s.predicate}) { r = ${s.fn}(X);${stop} ${assigns} }`);
      });
      lines.push('return r;');
      break;
    }
    case 'sum':
    case 'average':
    case 'weightedAverage':
      lines.push(
        `let n = 0, w = 0, t = 0${m.functionName === 'classification' ? ', P = ZEROS()' : ''}; ${missing.declarations()}`,
      );
      segs.forEach((s, k) => {
        if (s.fn === null) {
          // the first of a run of inline trees adds them all
          if (k > 0 && segs[k - 1].fn === null) return;
          let end = k;
          while (end < segs.length && segs[end].fn === null) end++;
          const trees = segs.slice(k, end).map((t) => t.segment as MiningSegment & { model: TreeModel });
          lines.push(...treeSums(e, trees, m.multipleModelMethod === 'weightedAverage'));
          return;
        }
        const weight = m.multipleModelMethod === 'weightedAverage' ? q(s.weight) : '1';
        const add =
          m.functionName === 'classification'
            ? `for (let c = 0; c < P.length; c++) P[c] += ${weight === '1' ? 'r.p[c]' : `${weight} * r.p[c]`};`
            : `t += ${weight === '1' ? 'r.v' : `${weight} * r.v`};`;
        lines.push(
          `if (${s.predicate}) { const r = ${s.fn}(X); ${missing.onResult(q(s.weight), `n++; w += ${weight}; ${add}`)} }`,
        );
      });
      lines.push('if (n === 0) return null;', ...missing.shareCheck());
      if (m.functionName === 'classification')
        lines.push(
          `for (let c = 0; c < P.length; c++) P[c] = P[c] / w; return { v: BEST(P, ${order}), p: P, rc: null };`,
        );
      else lines.push(`return { v: ${m.multipleModelMethod === 'sum' ? 't' : 't / w'}, p: null, rc: null };`);
      break;
    case 'median':
    case 'weightedMedian':
    case 'max':
    case 'weightedSum': {
      const weighted = m.multipleModelMethod === 'weightedMedian' || m.multipleModelMethod === 'weightedSum';
      e.once(ORDER_STATISTICS_RUNTIME);
      lines.push(`const R = [], W = []; ${missing.declarations()}`);
      segs.forEach((s) => {
        const use = `R.push(r); W.push(${weighted ? q(s.weight) : '1'});`;
        lines.push(`if (${s.predicate}) { const r = ${s.fn}(X); ${missing.onResult(q(s.weight), use)} }`);
      });
      lines.push(
        'if (R.length === 0) return null;',
        ...missing.shareCheck(),
        orderStatisticReturn(m.multipleModelMethod, m.functionName, order),
      );
      break;
    }
    case 'majorityVote':
    case 'weightedMajorityVote':
      // `mv`: the votes for "missing" (continue), which wins when it has more than every category
      lines.push(`let w = 0, mv = 0; const P = ZEROS(); ${missing.declarations()}`);
      segs.forEach((s) => {
        const vote = m.multipleModelMethod === 'weightedMajorityVote' ? q(s.weight) : '1';
        const onMissing = missing.treatment === 'continue' ? `mv += ${vote};` : '';
        lines.push(
          `if (${s.predicate}) { const r = ${s.fn}(X); ${missing.onResult(q(s.weight), `w += ${vote}; P[r.v] += ${vote};`, onMissing)} }`,
        );
      });
      lines.push('if (w === 0) return null;', ...missing.shareCheck(), `const b = BEST(P, ${order});`);
      if (missing.treatment === 'continue') lines.push('if (mv > P[b]) return null;');
      lines.push('for (let c = 0; c < P.length; c++) P[c] = P[c] / w; return { v: b, p: P, rc: null };');
      break;
  }
  e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
  return name;
}
