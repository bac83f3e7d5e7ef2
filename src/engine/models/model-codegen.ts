import type {
  FieldValue, MiningModel, ModelBody, ModelDocument, ModelInputField, ModelOutputField, Predicate, RegressionModel, ScorecardModel, TreeModel, TreeNode,
} from './model-document.js';
import { categoriesOf } from './pmml-reader.js';

/**
 * A model as JavaScript for the tenant's sandbox: one generated function per model body (and per tree
 * node), all data as JSON literals, so a model file can never inject code. The generated program follows
 * PMML 4.4: three-valued predicates (a comparison with a missing value is unknown), MiningSchema missing
 * and invalid value treatment, then the model, then the Output fields asked for.
 *
 * A result inside is `{ v: prediction, p: {category: probability} | null, rc: [reason codes] | null }`, or
 * null when the model predicts nothing (a missing value a regression needs, a tree with no true child…).
 */

const q = JSON.stringify;

/** Where the node reads each model input from: a JavaScript expression over `$$vars` per field name. */
export interface ModelFunctionOptions { reads: Record<string, string>; outputs: string[]; nodeId: string }

class Emitter {
  readonly parts: string[] = [];
  private next = 0;
  id(prefix: string): string { return `${prefix}${this.next++}`; }
}

/**
 * `(function () { …; return function ($$vars) → [output values in the order of options.outputs] })()`.
 * `rt.err` (the sandbox runtime's error) reports an invalid input under returnInvalid.
 */
export function modelFunction(doc: ModelDocument, options: ModelFunctionOptions): string {
  const e = new Emitter();
  const categories = categoriesOf(doc.model, doc.targetCategories).map(String);
  const typedCategory = new Map((doc.targetCategories ?? []).map((c) => [String(c), c]));
  const main = body(e, doc.model, categories);
  const prepared = doc.inputs.map((input, k) => `X[${q(input.name)}] = P${k}(${options.reads[input.name] ?? 'undefined'});`);
  const prepFns = doc.inputs.map((input, k) => prepareFunction(`P${k}`, input, options.nodeId));
  const byName = new Map(doc.outputs.map((o) => [o.name, o]));
  const values = options.outputs.map((name) => outputValue(byName.get(name)!));
  // Maps keyed by model data (categories, field names) have no prototype, and reach the sandbox through
  // JSON.parse (an object literal would read a "__proto__" key as the prototype): a category named
  // "constructor" or "__proto__" is a key like any other.
  return `(function () {
function NP(o) { return o === null ? null : Object.assign(Object.create(null), o); }
const CAT = NP(JSON.parse(${q(JSON.stringify(Object.fromEntries(typedCategory)))}));
function A3(ps) { let u = false; for (let k = 0; k < ps.length; k++) { if (ps[k] === false) return false; if (ps[k] === null) u = true; } return u ? null : true; }
function O3(ps) { let u = false; for (let k = 0; k < ps.length; k++) { if (ps[k] === true) return true; if (ps[k] === null) u = true; } return u ? null : false; }
function X3(ps) { let t = false; for (let k = 0; k < ps.length; k++) { if (ps[k] === null) return null; if (ps[k]) t = !t; } return t; }
function S3(ps) { for (let k = 0; k < ps.length; k++) if (ps[k] !== null) return ps[k]; return null; }
function BEST(p, cats) { let b = null; for (let k = 0; k < cats.length; k++) { const x = p[cats[k]]; if (x !== undefined && (b === null || x > p[b])) b = cats[k]; } return b; }
${prepFns.join('\n')}
${e.parts.join('\n')}
return function ($$vars) {
const X = Object.create(null);
${prepared.join('\n')}
const r = ${main}(X);
return [${values.join(', ')}];
};
})()`;
}

function outputValue(o: ModelOutputField): string {
  switch (o.feature) {
    case 'predictedValue': return '(r === null ? null : (CAT[r.v] !== undefined ? CAT[r.v] : r.v))';
    case 'probability': return o.value !== undefined
      ? `(r === null || !r.p ? null : (r.p[${q(String(o.value))}] === undefined ? 0 : r.p[${q(String(o.value))}]))`
      : '(r === null || !r.p ? null : r.p[r.v])';
    case 'reasonCode': return `(r === null || !r.rc || r.rc[${(o.rank ?? 1) - 1}] === undefined ? null : r.rc[${(o.rank ?? 1) - 1}])`;
  }
}

/** MiningSchema treatment of one input: a value of the field's type, or null for missing. */
function prepareFunction(name: string, input: ModelInputField, nodeId: string): string {
  const numeric = input.dataType !== 'string' && input.dataType !== 'boolean';
  const lines = ['let x = raw;', 'if (x === undefined || x === null || (typeof x === "number" && x !== x)) return ' + (input.missingValueReplacement !== undefined ? q(input.missingValueReplacement) : 'null') + ';'];
  lines.push('let ok = true;');
  if (numeric) {
    lines.push(`if (typeof x !== "number" || !isFinite(x)${input.dataType === 'integer' ? ' || x % 1 !== 0' : ''}) ok = false;`);
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
    lines.push('if (typeof x === "number" || typeof x === "boolean") x = String(x); else if (typeof x !== "string") ok = false;');
  }
  if (input.values && input.optype !== 'continuous') lines.push(`if (ok && !${q(input.values)}.includes(x)) ok = false;`);
  const missing = input.missingValueReplacement !== undefined ? q(input.missingValueReplacement) : 'null';
  switch (input.invalidValueTreatment) {
    case 'returnInvalid':
      lines.push(`if (!ok) throw rt.err("MODEL_INPUT_INVALID", ${q(`model input "${input.name}" of node '${nodeId}' is invalid: `)} + (typeof x === "string" ? JSON.stringify(x) : String(x)) + ${q(describe(input))});`);
      break;
    case 'asMissing': lines.push(`if (!ok) return ${missing};`); break;
    case 'asValue': lines.push(`if (!ok) return ${q(input.invalidValueReplacement)};`); break;
    case 'asIs': lines.push(`if (!ok && typeof x === "object") return ${missing};`); break;
  }
  lines.push('return x;');
  return `function ${name}(raw) {\n${lines.join('\n')}\n}`;
}

function describe(input: ModelInputField): string {
  if (input.values && input.optype !== 'continuous') return ` (valid: ${input.values.map((v) => String(v)).join(', ')})`;
  if (input.intervals) return ' (outside its valid intervals, or not a number)';
  return ` (expected ${input.dataType})`;
}

function predicate(p: Predicate): string {
  switch (p.op) {
    case 'true': return 'true';
    case 'false': return 'false';
    case 'simple': {
      const x = `X[${q(p.field)}]`;
      if (p.operator === 'isMissing') return `(${x} === null)`;
      if (p.operator === 'isNotMissing') return `(${x} !== null)`;
      const op = { equal: '===', notEqual: '!==', lessThan: '<', lessOrEqual: '<=', greaterThan: '>', greaterOrEqual: '>=' }[p.operator];
      return `(${x} === null ? null : ${x} ${op} ${q(p.value)})`;
    }
    case 'set': return `(X[${q(p.field)}] === null ? null : ${p.isIn ? '' : '!'}${q(p.values)}.includes(X[${q(p.field)}]))`;
    case 'compound': {
      const fn = { and: 'A3', or: 'O3', xor: 'X3', surrogate: 'S3' }[p.booleanOperator];
      return `${fn}([${p.predicates.map(predicate).join(', ')}])`;
    }
  }
}

/** Emits the function(s) of a model body; returns the name of the one to call with X. */
function body(e: Emitter, model: ModelBody, categories: string[]): string {
  switch (model.kind) {
    case 'regression': return regression(e, model, categories);
    case 'tree': return tree(e, model, categories);
    case 'scorecard': return scorecard(e, model);
    case 'mining': return mining(e, model, categories);
  }
}

function regression(e: Emitter, m: RegressionModel, categories: string[]): string {
  const name = e.id('R');
  const used = [...new Set(m.tables.flatMap((t) => [...t.numeric.map((n) => n.field), ...t.categorical.map((c) => c.field)]))];
  const lines = used.map((field, k) => `const a${k} = X[${q(field)}]; if (a${k} === null) return null;`);
  const slot = new Map(used.map((field, k) => [field, `a${k}`]));
  m.tables.forEach((t, j) => {
    const terms = [q(t.intercept)];
    for (const n of t.numeric) terms.push(n.exponent === 1 ? `${q(n.coefficient)} * ${slot.get(n.field)}` : `${q(n.coefficient)} * Math.pow(${slot.get(n.field)}, ${q(n.exponent)})`);
    for (const c of t.categorical) terms.push(`(${slot.get(c.field)} === ${q(c.value)} ? ${q(c.coefficient)} : 0)`);
    lines.push(`const y${j} = ${terms.join(' + ')};`);
  });
  if (m.functionName === 'regression') {
    const norm = { none: 'y0', exp: 'Math.exp(y0)', logit: '1 / (1 + Math.exp(-y0))', softmax: '1 / (1 + Math.exp(-y0))', simplemax: 'y0' }[m.normalizationMethod];
    lines.push(`return { v: ${norm}, p: null, rc: null };`);
  } else {
    const cats = m.tables.map((t) => String(t.targetCategory));
    const n = cats.length;
    const last = n - 1;
    if (m.normalizationMethod === 'softmax') {
      lines.push(`const mx = Math.max(${cats.map((_, j) => `y${j}`).join(', ')});`);
      cats.forEach((_, j) => lines.push(`const e${j} = Math.exp(y${j} - mx);`));
      lines.push(`const t = ${cats.map((_, j) => `e${j}`).join(' + ')};`);
      lines.push(`const p = Object.create(null); ${cats.map((c, j) => `p[${q(c)}] = e${j} / t;`).join(' ')}`);
    } else if (m.normalizationMethod === 'simplemax') {
      lines.push(`const t = ${cats.map((_, j) => `y${j}`).join(' + ')};`);
      lines.push(`const p = Object.create(null); ${cats.map((c, j) => `p[${q(c)}] = y${j} / t;`).join(' ')}`);
    } else {
      // logit and none: the last category gets what the others leave (PMML 4.4, RegressionModel).
      const f = (j: number) => (m.normalizationMethod === 'logit' ? `1 / (1 + Math.exp(-y${j}))` : `y${j}`);
      cats.slice(0, last).forEach((_, j) => lines.push(`const p${j} = ${f(j)};`));
      lines.push(`const p${last} = 1 - (${n > 1 ? cats.slice(0, last).map((_, j) => `p${j}`).join(' + ') : '0'});`);
      lines.push(`const p = Object.create(null); ${cats.map((c, j) => `p[${q(c)}] = p${j};`).join(' ')}`);
    }
    lines.push(`return { v: BEST(p, ${q(order(cats, categories))}), p: p, rc: null };`);
  }
  e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
  return name;
}

/** Ties go to the first category in the model's own order (its tables or distribution), then the declared order. */
function order(own: string[], declared: string[]): string[] {
  return [...new Set([...own, ...declared])];
}

function tree(e: Emitter, m: TreeModel, categories: string[]): string {
  const name = e.id('T');
  const nodeNames = new Map<TreeNode, string>();
  const results: string[] = [];
  const resultOf = (n: TreeNode): string => {
    if (m.functionName === 'regression') return n.score === undefined ? 'null' : `{ v: ${q(n.score)}, p: null, rc: null }`;
    let probabilities: Record<string, number> | null = null;
    if (n.distribution) {
      const total = n.distribution.reduce((s, d) => s + d.recordCount, 0);
      probabilities = Object.create(null) as Record<string, number>;
      for (const d of n.distribution) probabilities[String(d.value)] = d.probability ?? (total > 0 ? d.recordCount / total : 0);
    }
    let value: string | null = n.score !== undefined ? String(n.score) : null;
    if (value === null && probabilities) {
      const own = n.distribution!.map((d) => String(d.value));
      value = order(own, categories).reduce<string | null>((b, c) => (probabilities![c] !== undefined && (b === null || probabilities![c] > probabilities![b]) ? c : b), null);
    }
    return value === null ? 'null' : `{ v: ${q(value)}, p: NP(${probabilities ? `JSON.parse(${q(JSON.stringify(probabilities))})` : 'null'}), rc: null }`;
  };
  const visit = (n: TreeNode): void => {
    nodeNames.set(n, `${name}_${nodeNames.size}`);
    results.push(resultOf(n));
    n.children.forEach(visit);
  };
  visit(m.root);
  const fns: string[] = [];
  const index = new Map([...nodeNames.keys()].map((n, k) => [n, k]));
  for (const [n, fn] of nodeNames) {
    const here = `RS${name}[${index.get(n)}]`;
    const lines: string[] = [];
    if (n.children.length === 0) lines.push(`return ${here};`);
    else {
      n.children.forEach((c, k) => {
        const child = `${nodeNames.get(c)}(X)`;
        lines.push(`const t${k} = ${predicate(c.predicate)};`);
        switch (m.missingValueStrategy) {
          case 'none': break;
          case 'lastPrediction': lines.push(`if (t${k} === null) return ${here};`); break;
          case 'nullPrediction': lines.push(`if (t${k} === null) return null;`); break;
          case 'defaultChild': lines.push(`if (t${k} === null) return ${nodeNames.get(n.children.find((d) => d.id === n.defaultChild)!)}(X);`); break;
        }
        lines.push(`if (t${k} === true) return ${child};`);
      });
      lines.push(`return ${m.noTrueChildStrategy === 'returnLastPrediction' ? here : 'null'};`);
    }
    fns.push(`function ${fn}(X) {\n${lines.join('\n')}\n}`);
  }
  e.parts.push(`const RS${name} = [${results.join(', ')}];`, ...fns);
  e.parts.push(`function ${name}(X) { return ${predicate(m.root.predicate)} === true ? ${nodeNames.get(m.root)}(X) : null; }`);
  return name;
}

function scorecard(e: Emitter, m: ScorecardModel): string {
  const name = e.id('S');
  const lines = [`let s = ${q(m.initialScore)};`, 'const L = new Map();'];
  m.characteristics.forEach((c) => {
    lines.push('{');
    c.attributes.forEach((a, j) => {
      const code = a.reasonCode ?? c.reasonCode;
      const points = m.reasonCodeAlgorithm === 'pointsBelow' ? (c.baselineScore ?? 0) - a.partialScore : a.partialScore - (c.baselineScore ?? 0);
      const reason = m.useReasonCodes ? ` L.set(${q(code)}, (L.get(${q(code)}) || 0) + ${q(points)});` : '';
      lines.push(`${j === 0 ? '' : 'else '}if (${predicate(a.predicate)} === true) { s += ${q(a.partialScore)};${reason} }`);
    });
    // PMML: a characteristic none of whose attributes is true makes the score invalid.
    lines.push('else return null;', '}');
  });
  if (m.useReasonCodes) {
    // Ranked by points, highest first; equal points keep the order of first appearance (Array.prototype.sort is stable).
    lines.push('const rc = []; L.forEach(function (points, code) { if (points > 0) rc.push([code, points]); });');
    lines.push('rc.sort(function (a, b) { return b[1] - a[1]; });');
    lines.push('return { v: s, p: null, rc: rc.map(function (x) { return x[0]; }) };');
  } else lines.push('return { v: s, p: null, rc: null };');
  e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
  return name;
}

function mining(e: Emitter, m: MiningModel, categories: string[]): string {
  const name = e.id('M');
  const segs = m.segments.map((s) => ({ fn: body(e, s.model, categories), predicate: predicate(s.predicate), weight: s.weight, outputs: s.outputs }));
  const lines: string[] = [];
  const cats = q(categories);
  switch (m.multipleModelMethod) {
    case 'selectFirst':
      segs.forEach((s) => lines.push(`if (${s.predicate} === true) return ${s.fn}(X);`));
      lines.push('return null;');
      break;
    case 'modelChain':
      lines.push('X = Object.assign(Object.create(null), X);', 'let r = null;');
      segs.forEach((s) => {
        const assigns = s.outputs.map((o) => `X[${q(o.name)}] = ${outputValue(o)};`).join(' ');
        lines.push(`if (${s.predicate} === true) { r = ${s.fn}(X); ${assigns} }`);
      });
      lines.push('return r;');
      break;
    case 'sum': case 'average': case 'weightedAverage':
      lines.push('let n = 0, w = 0, t = 0, P = null;');
      segs.forEach((s) => {
        const weight = m.multipleModelMethod === 'weightedAverage' ? q(s.weight) : '1';
        lines.push(`if (${s.predicate} === true) { const r = ${s.fn}(X); if (r === null) return null; n++; w += ${weight};`);
        if (m.functionName === 'classification') lines.push(`if (P === null) P = Object.create(null); for (const c in r.p) P[c] = (P[c] || 0) + ${weight} * r.p[c]; }`);
        else lines.push(`t += ${weight === '1' ? 'r.v' : `${weight} * r.v`}; }`);
      });
      lines.push('if (n === 0) return null;');
      if (m.functionName === 'classification') lines.push(`for (const c in P) P[c] = P[c] / w; return { v: BEST(P, ${cats}), p: P, rc: null };`);
      else lines.push(`return { v: ${m.multipleModelMethod === 'sum' ? 't' : 't / w'}, p: null, rc: null };`);
      break;
    case 'majorityVote': case 'weightedMajorityVote':
      lines.push('let w = 0; const P = Object.create(null);');
      segs.forEach((s) => {
        const weight = m.multipleModelMethod === 'weightedMajorityVote' ? q(s.weight) : '1';
        lines.push(`if (${s.predicate} === true) { const r = ${s.fn}(X); if (r === null) return null; w += ${weight}; P[r.v] = (P[r.v] || 0) + ${weight}; }`);
      });
      lines.push(`if (w === 0) return null; for (const c in P) P[c] = P[c] / w; return { v: BEST(P, ${cats}), p: P, rc: null };`);
      break;
  }
  e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
  return name;
}

export type { FieldValue };
