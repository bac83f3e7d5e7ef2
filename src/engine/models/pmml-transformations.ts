import type { DerivedField, Expression, FieldValue, ModelDataType, TargetSpec } from './model-document.js';
import { attribute, declaredType, fieldTypes, readInterval } from './pmml-attributes.js';
import { fieldOf, invalid, kid, kids, number, typed, unsupported, type FieldInfo } from './pmml-values.js';
import type { XmlElement } from './xml-parser.js';

/**
 * PMML transformations (TransformationDictionary, LocalTransformations, the expressions of transformedValue
 * outputs) and Targets → model-document data. Every expression element PMML 4.4 defines and this engine does
 * not run is refused naming it (422); a derived field that depends on itself, directly or not, is invalid (400).
 */

const EXPRESSIONS = ['Constant', 'FieldRef', 'NormContinuous', 'NormDiscrete', 'Discretize', 'MapValues', 'Apply'];

/** Built-in functions by how many arguments they take: [fewest, most], then the functions. */
const ARITIES: [number, number, string[]][] = [
  [1, 1, ['log10', 'ln', 'sqrt', 'abs', 'exp', 'floor', 'ceil', 'round', 'isMissing', 'isNotMissing', 'not']],
  [1, 1, ['ln1p', 'expm1', 'rint', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'tanh']],
  [1, 1, ['erf', 'stdNormalCDF', 'stdNormalPDF']],
  [1, 1, ['uppercase', 'lowercase', 'trimBlanks']],
  [2, 2, ['+', '-', '*', '/', 'pow', 'threshold', 'modulo', 'atan2', 'hypot']],
  [3, 3, ['normalCDF', 'normalPDF']],
  [2, 2, ['equal', 'notEqual', 'lessThan', 'lessOrEqual', 'greaterThan', 'greaterOrEqual']],
  [1, Infinity, ['min', 'max', 'sum', 'avg', 'concat']],
  [2, Infinity, ['and', 'or', 'isIn', 'isNotIn']],
  [2, 3, ['if']],
  [3, 3, ['substring']],
];
const FUNCTIONS: Record<string, [number, number]> = Object.fromEntries(
  ARITIES.flatMap(([fewest, most, names]) => names.map((name) => [name, [fewest, most]])),
);

/** A value without a declared type: a number when it reads as one, else text. */
function loose(raw: string): FieldValue {
  const value = Number(raw.trim());
  return raw.trim() !== '' && !Number.isNaN(value) ? value : raw;
}

function typedOrLoose(path: string, dataType: ModelDataType | undefined, raw: string): FieldValue {
  return dataType ? typed(path, dataType, raw) : loose(raw);
}

/** The one expression element of a DerivedField, OutputField or Apply argument list member. */
function expressionChildren(element: XmlElement): XmlElement[] {
  return element.children.filter((c) => c.name !== 'Extension' && c.name !== 'Value' && c.name !== 'Decisions');
}

/**
 * Reads one expression element. `refs` collects the fields it reads (for the dependency order of derived
 * fields); `resultType` types its constants (mapMissingTo, defaultValue, bin and table values).
 */
function readExpression(
  x: XmlElement,
  path: string,
  fields: Map<string, FieldInfo>,
  refs: Set<string>,
  resultType?: ModelDataType,
): Expression {
  if (!EXPRESSIONS.includes(x.name))
    unsupported(path, `<${x.name}> is not supported in an expression (supported: ${EXPRESSIONS.join(', ')})`);
  const field = (name: string | undefined) => {
    const f = fieldOf({ path, fields }, path, name);
    refs.add(f.name);
    return f as FieldInfo;
  };
  const optional = <T>(
    raw: string | undefined,
    read: (raw: string) => T,
  ): { [k: string]: T } | Record<string, never> => (raw === undefined ? {} : { v: read(raw) });
  switch (x.name) {
    case 'Constant': {
      if (x.attributes.missing === 'true') return { op: 'constant', value: null };
      return { op: 'constant', value: typedOrLoose(path, declaredType(x, path, undefined), x.text) };
    }
    case 'FieldRef': {
      const f = field(x.attributes.field);
      const m = optional(x.attributes.mapMissingTo, (raw) => typed(path, f.dataType, raw));
      return { op: 'field', field: f.name, ...(m.v !== undefined ? { mapMissingTo: m.v } : {}) };
    }
    case 'NormContinuous': {
      const f = field(x.attributes.field);
      const points = kids(x, 'LinearNorm').map((n, k) => ({
        orig: number(`${path}.LinearNorm[${k}]`, n.attributes.orig, 'orig'),
        norm: number(`${path}.LinearNorm[${k}]`, n.attributes.norm, 'norm'),
      }));
      if (points.length < 2) invalid(path, 'needs at least two LinearNorm');
      points.forEach((p, k) => {
        if (k > 0 && !(p.orig > points[k - 1].orig))
          invalid(`${path}.LinearNorm[${k}]`, 'orig must increase from one LinearNorm to the next');
      });
      const outliers = attribute(x, path, 'NormContinuous.outliers');
      const m =
        x.attributes.mapMissingTo !== undefined ? number(path, x.attributes.mapMissingTo, 'mapMissingTo') : undefined;
      return { op: 'normContinuous', field: f.name, points, outliers, ...(m !== undefined ? { mapMissingTo: m } : {}) };
    }
    case 'NormDiscrete': {
      const f = field(x.attributes.field);
      if (x.attributes.method !== undefined && x.attributes.method !== 'indicator')
        unsupported(path, `method="${x.attributes.method}" is not supported (supported: indicator)`);
      if (x.attributes.value === undefined) invalid(path, 'attribute "value" is required');
      const m =
        x.attributes.mapMissingTo !== undefined ? number(path, x.attributes.mapMissingTo, 'mapMissingTo') : undefined;
      return {
        op: 'normDiscrete',
        field: f.name,
        value: typed(path, f.dataType, x.attributes.value!),
        ...(m !== undefined ? { mapMissingTo: m } : {}),
      };
    }
    case 'Discretize': {
      const f = field(x.attributes.field);
      const outType = declaredType(x, path, resultType);
      const bins = kids(x, 'DiscretizeBin').map((b, k) => {
        const bpath = `${path}.DiscretizeBin[${k}]`;
        const interval = kid(b, 'Interval') ?? invalid(bpath, 'needs an Interval');
        if (b.attributes.binValue === undefined) invalid(bpath, 'attribute "binValue" is required');
        return {
          value: typedOrLoose(bpath, outType, b.attributes.binValue!),
          ...readInterval(interval, `${bpath}.Interval`),
        };
      });
      const m = optional(x.attributes.mapMissingTo, (raw) => typedOrLoose(path, outType, raw));
      const d = optional(x.attributes.defaultValue, (raw) => typedOrLoose(path, outType, raw));
      return {
        op: 'discretize',
        field: f.name,
        bins,
        ...(m.v !== undefined ? { mapMissingTo: m.v } : {}),
        ...(d.v !== undefined ? { defaultValue: d.v } : {}),
      };
    }
    case 'MapValues': {
      if (kid(x, 'TableLocator'))
        unsupported(`${path}.TableLocator`, 'TableLocator is not supported: give the table inline (InlineTable)');
      const outType = declaredType(x, path, resultType);
      const output = x.attributes.outputColumn ?? invalid(path, 'attribute "outputColumn" is required');
      const pairs = kids(x, 'FieldColumnPair').map((p, k) => {
        const ppath = `${path}.FieldColumnPair[${k}]`;
        const f = fieldOf({ path: ppath, fields }, ppath, p.attributes.field);
        refs.add(f.name);
        return {
          field: f as FieldInfo,
          column: p.attributes.column ?? invalid(ppath, 'attribute "column" is required'),
        };
      });
      if (pairs.length === 0) invalid(path, 'needs at least one FieldColumnPair');
      const table = kid(x, 'InlineTable') ?? invalid(path, 'needs an InlineTable');
      const cell = (row: XmlElement, column: string) =>
        row.children.find((c) => c.name === column || c.name.endsWith(`:${column}`));
      const rows = kids(table, 'row').map((row, k) => {
        const rpath = `${path}.InlineTable.row[${k}]`;
        const keys = pairs.map((p) => {
          const c = cell(row, p.column) ?? invalid(rpath, `has no column "${p.column}"`);
          return typed(rpath, p.field.dataType, c.text);
        });
        const out = cell(row, output) ?? invalid(rpath, `has no column "${output}"`);
        return { keys, value: typedOrLoose(rpath, outType, out.text) };
      });
      const m = optional(x.attributes.mapMissingTo, (raw) => typedOrLoose(path, outType, raw));
      const d = optional(x.attributes.defaultValue, (raw) => typedOrLoose(path, outType, raw));
      return {
        op: 'mapValues',
        fields: pairs.map((p) => p.field.name),
        rows,
        ...(m.v !== undefined ? { mapMissingTo: m.v } : {}),
        ...(d.v !== undefined ? { defaultValue: d.v } : {}),
      };
    }
    default: {
      // Apply
      const fn = x.attributes.function ?? invalid(path, 'attribute "function" is required');
      const arity = Object.hasOwn(FUNCTIONS, fn)
        ? FUNCTIONS[fn]
        : unsupported(path, `function "${fn}" is not supported (supported: ${Object.keys(FUNCTIONS).join(', ')})`);
      const parts = expressionChildren(x);
      const args = parts.map((c, k) => readExpression(c, `${path}.${c.name}[${k}]`, fields, refs));
      if (args.length < arity[0] || args.length > arity[1])
        invalid(
          path,
          `function "${fn}" takes ${arity[0] === arity[1] ? arity[0] : `${arity[0]} to ${arity[1] === Infinity ? 'any number of' : arity[1]}`} arguments, got ${args.length}`,
        );
      const invalidValueTreatment = attribute(x, path, 'Apply.invalidValueTreatment');
      const m = optional(x.attributes.mapMissingTo, (raw) => typedOrLoose(path, resultType, raw));
      const d = optional(x.attributes.defaultValue, (raw) => typedOrLoose(path, resultType, raw));
      return {
        op: 'apply',
        function: fn,
        args,
        invalidValueTreatment,
        ...(m.v !== undefined ? { mapMissingTo: m.v } : {}),
        ...(d.v !== undefined ? { defaultValue: d.v } : {}),
      };
    }
  }
}

/** The expression of an element that holds exactly one (DerivedField, OutputField); undefined when it holds none. */
export function expressionOf(
  element: XmlElement,
  path: string,
  fields: Map<string, FieldInfo>,
  refs: Set<string>,
  resultType?: ModelDataType,
): Expression | undefined {
  const parts = expressionChildren(element);
  if (parts.length === 0) return undefined;
  if (parts.length > 1) invalid(path, `holds ${parts.length} expressions, one is allowed`);
  return readExpression(parts[0], `${path}.${parts[0].name}`, fields, refs, resultType);
}

/**
 * The DerivedFields of a TransformationDictionary or LocalTransformations, dependencies first (they may read
 * each other in any order; a cycle is refused naming a field on it), and the fields in scope after them.
 */
export function readDerivedFields(
  container: XmlElement,
  path: string,
  fields: Map<string, FieldInfo>,
): { derived: DerivedField[]; fields: Map<string, FieldInfo> } {
  const defined = kid(container, 'DefineFunction');
  if (defined) unsupported(`${path}.DefineFunction`, 'user-defined functions (DefineFunction) are not supported');
  const scope = new Map(fields);
  const elements = kids(container, 'DerivedField').map((d, k) => {
    const dpath = `${path}.DerivedField[${k}]`;
    const name = d.attributes.name ?? invalid(dpath, 'attribute "name" is required');
    if (scope.has(name)) invalid(dpath, `field "${name}" is already defined`);
    const { dataType, optype } = fieldTypes(d, dpath, 'double');
    scope.set(name, { name, dataType, optype });
    return { d, dpath, name, dataType, optype };
  });
  const read = elements.map(({ d, dpath, name, dataType, optype }) => {
    const refs = new Set<string>();
    const expression = expressionOf(d, dpath, scope, refs, dataType) ?? invalid(dpath, 'needs an expression');
    return { path: dpath, refs, field: { name, dataType, optype, expression } as DerivedField };
  });
  const byName = new Map(read.map((r) => [r.field.name, r]));
  const ordered: DerivedField[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, trail: string[]): void => {
    const r = byName.get(name);
    if (!r || state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(name)), name];
      invalid(r.path, `derived field "${name}" depends on itself (${cycle.join(' → ')})`);
    }
    state.set(name, 'visiting');
    for (const dep of r.refs) visit(dep, [...trail, name]);
    state.set(name, 'done');
    ordered.push(r.field);
  };
  for (const r of read) visit(r.field.name, []);
  return { derived: ordered, fields: scope };
}

/** A model's Targets: its one Target, for the model's target field. */
export function readTargets(
  targets: XmlElement,
  path: string,
  functionName: 'regression' | 'classification',
  categories: Set<string>,
): TargetSpec {
  const list = kids(targets, 'Target');
  if (list.length !== 1) unsupported(path, `${list.length} Target elements: one, for the model's target, is supported`);
  const t = list[0];
  const tpath = `${path}.Target`;
  const spec: TargetSpec = {
    rescaleFactor: number(tpath, t.attributes.rescaleFactor, 'rescaleFactor', 1),
    rescaleConstant: number(tpath, t.attributes.rescaleConstant, 'rescaleConstant', 0),
  };
  if (t.attributes.min !== undefined) spec.min = number(tpath, t.attributes.min, 'min');
  if (t.attributes.max !== undefined) spec.max = number(tpath, t.attributes.max, 'max');
  if (t.attributes.castInteger !== undefined) spec.castInteger = attribute(t, tpath, 'Target.castInteger');
  const rescales = ['min', 'max', 'rescaleFactor', 'rescaleConstant', 'castInteger'].filter(
    (a) => t.attributes[a] !== undefined,
  );
  if (functionName === 'classification' && rescales.length > 0)
    invalid(tpath, `${rescales[0]} is for the target of a regression`);
  const values = kids(t, 'TargetValue');
  values.forEach((v, k) => {
    const vpath = `${tpath}.TargetValue[${k}]`;
    if (functionName === 'regression') {
      if (v.attributes.priorProbability !== undefined)
        invalid(vpath, 'priorProbability is for the target of a classification');
      if (v.attributes.defaultValue !== undefined) {
        if (spec.defaultValue !== undefined) invalid(vpath, 'a second defaultValue');
        spec.defaultValue = number(vpath, v.attributes.defaultValue, 'defaultValue');
      }
    } else {
      if (v.attributes.defaultValue !== undefined) invalid(vpath, 'defaultValue is for the target of a regression');
      if (v.attributes.priorProbability === undefined) return;
      const value = v.attributes.value ?? invalid(vpath, 'a priorProbability needs the category (value)');
      if (!categories.has(value)) invalid(vpath, `"${value}" is not a category of the target`);
      spec.priors = [
        ...(spec.priors ?? []),
        { value, probability: number(vpath, v.attributes.priorProbability, 'priorProbability') },
      ];
    }
    if (kid(v, 'Partition')) unsupported(`${vpath}.Partition`, 'Partition is not supported');
  });
  return spec;
}
