import type { DerivedField, Expression, FieldValue, ModelDataType, TargetSpec } from './model-document.js';
import { NORMAL_SOURCE } from './normal-distribution.js';

/**
 * The generated JavaScript of PMML expressions (derived fields, transformedValue outputs) and of Targets, for
 * model-codegen.ts. Expressions read and write the model's field array `X` (null: missing), as the model
 * bodies do; all model data goes in as JSON constants.
 */

const q = JSON.stringify;
const data = (value: unknown) => `JSON.parse(${q(JSON.stringify(value))})`;

/** What of model-codegen's emitter the expressions use. */
interface CodeSink {
  readonly parts: string[];
  readonly categories: string[];
  id(prefix: string): string;
  slot(field: string): number;
  category(value: FieldValue): number | undefined;
  constant(source: string): string;
}

/** Helpers of the expressions, emitted once per model that has any. */
const RUNTIME = `const NORMAL = ${NORMAL_SOURCE};
function NORMC(x, o, n, out, mm) {
  if (x === null) return mm;
  if (typeof x !== "number") return null;
  const last = o.length - 1;
  let k = 0;
  if (x < o[0]) { if (out === 1) return null; if (out === 2) return n[0]; }
  else if (x > o[last]) { if (out === 1) return null; if (out === 2) return n[last]; k = last - 1; }
  else while (k < last - 1 && x > o[k + 1]) k++;
  return n[k] + (x - o[k]) / (o[k + 1] - o[k]) * (n[k + 1] - n[k]);
}
function DISC(x, bins, mm, dv) {
  if (x === null) return mm;
  if (typeof x === "number") for (let k = 0; k < bins.length; k++) {
    const b = bins[k];
    if ((b.min === undefined || (b.minClosed ? x >= b.min : x > b.min)) && (b.max === undefined || (b.maxClosed ? x <= b.max : x < b.max))) return b.value;
  }
  return dv;
}
function MAPV(xs, rows, mm, dv) {
  for (let k = 0; k < xs.length; k++) if (xs[k] === null) return mm;
  for (let j = 0; j < rows.length; j++) {
    const keys = rows[j].keys;
    let ok = true;
    for (let k = 0; k < xs.length; k++) if (keys[k] !== xs[k]) { ok = false; break; }
    if (ok) return rows[j].value;
  }
  return dv;
}
function CAST(v, t) {
  if (v === null || v === undefined) return null;
  if (t === "string") return typeof v === "string" ? v : String(v);
  if (t === "boolean") return typeof v === "number" ? v !== 0 : v;
  return typeof v === "boolean" ? (v ? 1 : 0) : v;
}`;

const withRuntime = new WeakSet<CodeSink>();

/** Names what an invalid function result fails, in MODEL_INPUT_INVALID's message. */
interface ExpressionSite {
  nodeId: string;
  what: string;
}

const NUMERIC: Record<string, (a: string[]) => string> = {
  '+': (a) => `${a[0]} + ${a[1]}`,
  '-': (a) => `${a[0]} - ${a[1]}`,
  '*': (a) => `${a[0]} * ${a[1]}`,
  '/': (a) => `${a[0]} / ${a[1]}`,
  pow: (a) => `Math.pow(${a[0]}, ${a[1]})`,
  threshold: (a) => `(${a[0]} > ${a[1]} ? 1 : 0)`,
  min: (a) => `Math.min(${a.join(', ')})`,
  max: (a) => `Math.max(${a.join(', ')})`,
  sum: (a) => a.join(' + '),
  avg: (a) => `(${a.join(' + ')}) / ${a.length}`,
  log10: (a) => `Math.log10(${a[0]})`,
  ln: (a) => `Math.log(${a[0]})`,
  sqrt: (a) => `Math.sqrt(${a[0]})`,
  abs: (a) => `Math.abs(${a[0]})`,
  exp: (a) => `Math.exp(${a[0]})`,
  floor: (a) => `Math.floor(${a[0]})`,
  ceil: (a) => `Math.ceil(${a[0]})`,
  // Java's Math.round, as PMML's reference implementations: halves go up (-2.5 → -2), which JavaScript's Math.round also does
  round: (a) => `Math.round(${a[0]})`,
  ln1p: (a) => `Math.log1p(${a[0]})`,
  expm1: (a) => `Math.expm1(${a[0]})`,
  // to the nearest integer, halves to the even one (Java's Math.rint, as PMML's reference implementations)
  rint: (a) => `(Math.abs(${a[0]} % 1) === 0.5 ? 2 * Math.round(${a[0]} / 2) : Math.round(${a[0]}))`,
  // PMML 4.4: the result has the sign of the divisor (x − y·floor(x / y))
  modulo: (a) => `${a[0]} - ${a[1]} * Math.floor(${a[0]} / ${a[1]})`,
  sin: (a) => `Math.sin(${a[0]})`,
  cos: (a) => `Math.cos(${a[0]})`,
  tan: (a) => `Math.tan(${a[0]})`,
  asin: (a) => `Math.asin(${a[0]})`,
  acos: (a) => `Math.acos(${a[0]})`,
  atan: (a) => `Math.atan(${a[0]})`,
  sinh: (a) => `Math.sinh(${a[0]})`,
  cosh: (a) => `Math.cosh(${a[0]})`,
  tanh: (a) => `Math.tanh(${a[0]})`,
  atan2: (a) => `Math.atan2(${a[0]}, ${a[1]})`,
  hypot: (a) => `Math.hypot(${a[0]}, ${a[1]})`,
  erf: (a) => `NORMAL.erf(${a[0]})`,
  stdNormalCDF: (a) => `NORMAL.cdf(${a[0]})`,
  stdNormalPDF: (a) => `NORMAL.pdf(${a[0]})`,
  // (x, mean, standard deviation)
  normalCDF: (a) => `NORMAL.cdf((${a[0]} - ${a[1]}) / ${a[2]})`,
  normalPDF: (a) => `NORMAL.pdf((${a[0]} - ${a[1]}) / ${a[2]}) / ${a[2]}`,
};

const OTHER: Record<string, (a: string[]) => string> = {
  equal: (a) => `${a[0]} === ${a[1]}`,
  notEqual: (a) => `${a[0]} !== ${a[1]}`,
  lessThan: (a) => `${a[0]} < ${a[1]}`,
  lessOrEqual: (a) => `${a[0]} <= ${a[1]}`,
  greaterThan: (a) => `${a[0]} > ${a[1]}`,
  greaterOrEqual: (a) => `${a[0]} >= ${a[1]}`,
  and: (a) => a.map((x) => `${x} === true`).join(' && '),
  or: (a) => `(${a.map((x) => `${x} === true`).join(' || ')})`,
  not: (a) => `${a[0]} !== true`,
  isIn: (a) => `[${a.slice(1).join(', ')}].includes(${a[0]})`,
  isNotIn: (a) => `![${a.slice(1).join(', ')}].includes(${a[0]})`,
  uppercase: (a) => `String(${a[0]}).toUpperCase()`,
  lowercase: (a) => `String(${a[0]}).toLowerCase()`,
  trimBlanks: (a) => `String(${a[0]}).trim()`,
  // PMML positions start at 1
  substring: (a) => `String(${a[0]}).slice(${a[1]} - 1, ${a[1]} - 1 + ${a[2]})`,
  concat: (a) => a.map((x) => `String(${x})`).join(' + '),
};

/** A JavaScript expression over `X` giving the expression's value, null when missing. */
export function expressionSource(e: CodeSink, site: ExpressionSite, x: Expression): string {
  if (!withRuntime.has(e)) {
    withRuntime.add(e);
    e.parts.push(RUNTIME);
  }
  const opt = (v: FieldValue | undefined) => (v === undefined ? 'null' : q(v));
  switch (x.op) {
    case 'constant':
      return x.value === null ? 'null' : q(x.value);
    case 'field': {
      const ref = `X[${e.slot(x.field)}]`;
      return x.mapMissingTo === undefined ? ref : `(${ref} === null ? ${q(x.mapMissingTo)} : ${ref})`;
    }
    case 'normContinuous': {
      const outliers = { asIs: 0, asMissingValues: 1, asExtremeValues: 2 }[x.outliers];
      return `NORMC(X[${e.slot(x.field)}], ${e.constant(q(x.points.map((p) => p.orig)))}, ${e.constant(q(x.points.map((p) => p.norm)))}, ${outliers}, ${opt(x.mapMissingTo)})`;
    }
    case 'normDiscrete': {
      const ref = `X[${e.slot(x.field)}]`;
      return `(${ref} === null ? ${opt(x.mapMissingTo)} : ${ref} === ${q(x.value)} ? 1 : 0)`;
    }
    case 'discretize':
      return `DISC(X[${e.slot(x.field)}], ${e.constant(data(x.bins))}, ${opt(x.mapMissingTo)}, ${opt(x.defaultValue)})`;
    case 'mapValues':
      return `MAPV([${x.fields.map((f) => `X[${e.slot(f)}]`).join(', ')}], ${e.constant(data(x.rows))}, ${opt(x.mapMissingTo)}, ${opt(x.defaultValue)})`;
    case 'apply':
      return `${applyFunction(e, site, x)}(X)`;
  }
}

/**
 * An Apply as a function of its own. PMML 4.4: an input that is missing gives `mapMissingTo` when there is
 * one, else the function's result is missing; a missing result gives `defaultValue` when there is one. `if`
 * only needs its condition and the branch it takes; isMissing and isNotMissing answer for a missing input, unless
 * there is a `mapMissingTo` (PMML applies it whatever the function).
 * A number that is not finite (a division by zero, the logarithm of 0 or less, a number function given text)
 * is invalid: `returnInvalid` fails the run, `asMissing` makes it missing, `asIs` keeps it.
 */
function applyFunction(e: CodeSink, site: ExpressionSite, x: Extract<Expression, { op: 'apply' }>): string {
  const name = e.id('F');
  const args = x.args.map((a) => expressionSource(e, site, a));
  const missing =
    x.mapMissingTo !== undefined ? q(x.mapMissingTo) : x.defaultValue !== undefined ? q(x.defaultValue) : 'null';
  const finish = x.defaultValue !== undefined ? `return y === null ? ${q(x.defaultValue)} : y;` : 'return y;';
  const lines: string[] = [];
  if (x.function === 'isMissing' || x.function === 'isNotMissing') {
    lines.push(`const a0 = ${args[0]};`);
    if (x.mapMissingTo !== undefined) lines.push(`if (a0 === null) return ${q(x.mapMissingTo)};`);
    lines.push(`return a0 ${x.function === 'isMissing' ? '===' : '!=='} null;`);
  } else if (x.function === 'if') {
    lines.push(`const c = ${args[0]};`, `if (c === null) return ${missing};`);
    lines.push(`const y = c === true ? ${args[1]} : ${args[2] ?? 'null'};`, finish);
  } else {
    const names = args.map((_, k) => `a${k}`);
    lines.push(...args.map((a, k) => `const a${k} = ${a};`));
    lines.push(`if (${names.map((a) => `${a} === null`).join(' || ')}) return ${missing};`);
    if (Object.hasOwn(NUMERIC, x.function)) {
      lines.push(
        `let y = ${names.map((a) => `typeof ${a} !== "number"`).join(' || ')} ? NaN : ${NUMERIC[x.function](names)};`,
      );
      const message = `${site.what} of node '${site.nodeId}' is invalid: function "${x.function}" gave `;
      switch (x.invalidValueTreatment) {
        case 'returnInvalid':
          lines.push(
            `if (!isFinite(y)) throw rt.err("MODEL_INPUT_INVALID", ${q(message)} + String(y) + " for " + ${q(names.length === 1 ? 'input ' : 'inputs ')} + [${names.join(', ')}].map((v) => typeof v === "string" ? JSON.stringify(v) : String(v)).join(", "));`,
          );
          break;
        case 'asMissing':
          lines.push('if (!isFinite(y)) y = null;');
          break;
        case 'asIs':
          break;
      }
    } else {
      lines.push(`const y = ${OTHER[x.function](names)};`);
    }
    lines.push(finish);
  }
  e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
  return name;
}

/** The field names a piece of model data reads: the `field` and `fields` of its predicates, predictors and expressions. */
function fieldsRead(value: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) fieldsRead(v, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'field' && typeof v === 'string') into.add(v);
      else if (key === 'fields' && Array.isArray(v)) for (const f of v) into.add(String(f));
      else fieldsRead(v, into);
    }
  }
  return into;
}

/**
 * Statements computing, in order, the derived fields that `readers` (the model body, output expressions) read
 * directly or through other derived fields. As PMML evaluators compute a derived field only when it is used, one
 * that nothing reads is not computed: its invalid values fail no run and cost nothing.
 */
export function derivedStatements(e: CodeSink, nodeId: string, all: DerivedField[], readers: unknown[]): string[] {
  const used = fieldsRead(readers, new Set());
  // dependencies come first: walking backwards meets each field's readers before the field itself
  const needed = new Set<DerivedField>();
  for (const d of [...all].reverse()) {
    if (used.has(d.name)) {
      needed.add(d);
      fieldsRead(d.expression, used);
    }
  }
  const derived = all.filter((d) => needed.has(d));
  return derived.map(
    (d) =>
      `X[${e.slot(d.name)}] = CAST(${expressionSource(e, { nodeId, what: `derived field "${d.name}"` }, d.expression)}, ${q(castType(d.dataType))});`,
  );
}

function castType(dataType: ModelDataType): 'string' | 'boolean' | 'number' {
  return dataType === 'string' || dataType === 'boolean' ? dataType : 'number';
}

/**
 * A function applying a model's Targets to the result of `inner` (PMML 4.4, Targets): a regression's prediction
 * is clipped to min and max, then rescaled (× rescaleFactor + rescaleConstant), then cast to an integer; a
 * model that predicts nothing gives the TargetValue defaultValue (regression) or, for a classification, the
 * prior probabilities and their most probable category.
 */
export function targetsFunction(
  e: CodeSink,
  t: TargetSpec,
  inner: string,
  functionName: 'regression' | 'classification',
): string {
  const name = e.id('TG');
  const lines = [`const r = ${inner}(X);`];
  if (functionName === 'regression') {
    lines.push(
      `if (r === null) return ${t.defaultValue !== undefined ? `{ v: ${q(t.defaultValue)}, p: null, rc: null }` : 'null'};`,
      'let v = r.v;',
    );
    if (t.min !== undefined) lines.push(`if (v < ${q(t.min)}) v = ${q(t.min)};`);
    if (t.max !== undefined) lines.push(`if (v > ${q(t.max)}) v = ${q(t.max)};`);
    if (t.rescaleFactor !== 1) lines.push(`v = v * ${q(t.rescaleFactor)};`);
    if (t.rescaleConstant !== 0) lines.push(`v = v + ${q(t.rescaleConstant)};`);
    if (t.castInteger)
      lines.push(`v = ${{ round: 'Math.round', ceiling: 'Math.ceil', floor: 'Math.floor' }[t.castInteger]}(v);`);
    lines.push('return { v: v, p: r.p, rc: r.rc };');
  } else if (t.priors) {
    const p = e.categories.map(() => 0);
    for (const prior of t.priors) p[e.category(prior.value)!] = prior.probability;
    let v = -1;
    for (const prior of t.priors) {
      const c = e.category(prior.value)!;
      if (v < 0 || p[c] > p[v]) v = c;
    }
    lines.push(`if (r === null) return ${e.constant(data({ v, p, rc: null }))};`, 'return r;');
  } else lines.push('return r;');
  e.parts.push(`function ${name}(X) {\n${lines.join('\n')}\n}`);
  return name;
}
