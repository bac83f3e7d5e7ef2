import type {
  DerivedField,
  FieldValue,
  MiningModel,
  OutputExpression,
  TargetSpec,
  MiningSegment,
  ModelBody,
  ModelDataType,
  ModelDocument,
  ModelInputField,
  ModelOutputField,
  OpType,
  Predicate,
  RegressionModel,
  RegressionTable,
  ScorecardModel,
  TreeModel,
  TreeNode,
} from './model-document.js';
import { classificationTreeNodes, modelCategories } from './model-categories.js';
import { parseXml, XmlSyntaxError, type XmlElement, type XmlLimits } from './xml-parser.js';
import { attribute, fieldTypes, readInterval } from './pmml-attributes.js';
import { readDerivedFields, readTargets, expressionOf } from './pmml-transformations.js';
import { checkTreeStrategy } from './pmml-tree-strategies.js';
import { checkSegmentProbabilities } from './pmml-segment-probabilities.js';
import {
  ModelFileError,
  fieldOf,
  invalid,
  kid,
  kids,
  number,
  typed,
  unsupported,
  type Context,
  type FieldInfo,
} from './pmml-values.js';

export { ModelFileError } from './pmml-values.js';

/**
 * Bounds on what a model's generated code holds: a probability per category in every node of a
 * classification tree. Files within MODEL_MAX_BYTES could otherwise ask for billions of values.
 */
const MAX_CATEGORIES = 1000;
const MAX_PROBABILITY_CELLS = 5_000_000;

/**
 * PMML (4.x) → ModelDocument. Refuses, naming the element, what it cannot run exactly as PMML defines it
 * (other model types, expressions and strategies we do not implement), so that a model either
 * scores as its producer meant or is not accepted at all.
 */

const MODEL_ELEMENTS = ['RegressionModel', 'TreeModel', 'Scorecard', 'MiningModel'];
const REFUSED_MODELS = [
  'NeuralNetwork',
  'SupportVectorMachineModel',
  'NaiveBayesModel',
  'GeneralRegressionModel',
  'ClusteringModel',
  'NearestNeighborModel',
  'RuleSetModel',
  'AssociationModel',
  'SequenceModel',
  'TextModel',
  'TimeSeriesModel',
  'BaselineModel',
  'BayesianNetworkModel',
  'GaussianProcessModel',
  'AnomalyDetectionModel',
];

function predicateOf(ctx: Context, element: XmlElement, path: string): Predicate {
  const found = element.children.filter((c) =>
    ['True', 'False', 'SimplePredicate', 'CompoundPredicate', 'SimpleSetPredicate'].includes(c.name),
  );
  if (found.length !== 1)
    invalid(
      path,
      'needs exactly one predicate (True, False, SimplePredicate, CompoundPredicate or SimpleSetPredicate)',
    );
  return readPredicate(ctx, found[0], `${path}.${found[0].name}`);
}

function readPredicate(ctx: Context, p: XmlElement, path: string): Predicate {
  switch (p.name) {
    case 'True':
      return { op: 'true' };
    case 'False':
      return { op: 'false' };
    case 'SimplePredicate': {
      const field = fieldOf(ctx, path, p.attributes.field);
      const operator = attribute(p, path, 'SimplePredicate.operator');
      if (operator === 'isMissing' || operator === 'isNotMissing') return { op: 'simple', field: field.name, operator };
      if (p.attributes.value === undefined) invalid(path, `operator "${operator}" needs a value`);
      return { op: 'simple', field: field.name, operator, value: typed(path, field.dataType, p.attributes.value!) };
    }
    case 'SimpleSetPredicate': {
      const field = fieldOf(ctx, path, p.attributes.field);
      const operator = attribute(p, path, 'SimpleSetPredicate.booleanOperator');
      const array = kid(p, 'Array');
      if (!array) invalid(path, 'needs an Array');
      return {
        op: 'set',
        field: field.name,
        isIn: operator === 'isIn',
        values: arrayValues(array!, `${path}.Array`).map((v) => typed(`${path}.Array`, field.dataType, v)),
      };
    }
    case 'CompoundPredicate': {
      const booleanOperator = attribute(p, path, 'CompoundPredicate.booleanOperator');
      const parts = p.children.filter((c) =>
        ['True', 'False', 'SimplePredicate', 'CompoundPredicate', 'SimpleSetPredicate'].includes(c.name),
      );
      if (parts.length < 2) invalid(path, 'needs at least two predicates');
      return {
        op: 'compound',
        booleanOperator,
        predicates: parts.map((c, k) => readPredicate(ctx, c, `${path}.${c.name}[${k}]`)),
      };
    }
    default:
      return invalid(path, `unknown predicate <${p.name}>`);
  }
}

/** PMML Array content: whitespace-separated, with "double quoted" entries that may hold spaces. */
function arrayValues(array: XmlElement, path: string): string[] {
  const values: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const m of array.text.matchAll(re)) values.push(m[1] !== undefined ? m[1].replace(/\\"/g, '"') : m[2]);
  if (array.attributes.n !== undefined && Number(array.attributes.n) !== values.length)
    invalid(path, `n="${array.attributes.n}" but the array holds ${values.length} values`);
  return values;
}

function readRegression(
  ctx: Context,
  m: XmlElement,
  path: string,
  functionName: 'regression' | 'classification',
): RegressionModel {
  const normalizationMethod = attribute(m, path, 'RegressionModel.normalizationMethod');
  const tables: RegressionTable[] = kids(m, 'RegressionTable').map((t, k) => {
    const tpath = `${path}.RegressionTable[${k}]`;
    if (kids(t, 'PredictorTerm').length > 0) unsupported(tpath, 'PredictorTerm (interaction terms) is not supported');
    return {
      intercept: number(tpath, t.attributes.intercept, 'intercept'),
      ...(t.attributes.targetCategory !== undefined ? { targetCategory: t.attributes.targetCategory } : {}),
      numeric: kids(t, 'NumericPredictor').map((n, j) => ({
        field: fieldOf(ctx, `${tpath}.NumericPredictor[${j}]`, n.attributes.name).name,
        exponent: number(`${tpath}.NumericPredictor[${j}]`, n.attributes.exponent, 'exponent', 1),
        coefficient: number(`${tpath}.NumericPredictor[${j}]`, n.attributes.coefficient, 'coefficient'),
      })),
      categorical: kids(t, 'CategoricalPredictor').map((c, j) => {
        const field = fieldOf(ctx, `${tpath}.CategoricalPredictor[${j}]`, c.attributes.name);
        return {
          field: field.name,
          value: typed(`${tpath}.CategoricalPredictor[${j}]`, field.dataType, c.attributes.value ?? ''),
          coefficient: number(`${tpath}.CategoricalPredictor[${j}]`, c.attributes.coefficient, 'coefficient'),
        };
      }),
    };
  });
  if (tables.length === 0) invalid(path, 'needs at least one RegressionTable');
  if (functionName === 'regression' && tables.length !== 1)
    invalid(path, 'a regression needs exactly one RegressionTable');
  if (functionName === 'classification' && tables.some((t) => t.targetCategory === undefined))
    invalid(path, 'every RegressionTable of a classification needs a targetCategory');
  if (functionName === 'regression' && normalizationMethod === 'simplemax')
    unsupported(path, `normalizationMethod="${normalizationMethod}" of a regression is not supported`);
  if (functionName === 'classification' && normalizationMethod === 'exp')
    unsupported(path, 'normalizationMethod="exp" of a classification is not supported');
  return { kind: 'regression', functionName, normalizationMethod, tables };
}

function readTree(ctx: Context, m: XmlElement, path: string, functionName: 'regression' | 'classification'): TreeModel {
  const missingValueStrategy = attribute(m, path, 'TreeModel.missingValueStrategy');
  const noTrueChildStrategy = attribute(m, path, 'TreeModel.noTrueChildStrategy');
  const multiPath = missingValueStrategy === 'weightedConfidence' || missingValueStrategy === 'aggregateNodes';
  const top = kid(m, 'Node');
  if (!top) invalid(path, 'needs a Node');
  const readNode = (n: XmlElement, npath: string): TreeNode => {
    const node: TreeNode = { predicate: predicateOf(ctx, n, npath), children: [] };
    if (n.attributes.id !== undefined) node.id = n.attributes.id;
    // only the strategies that weigh children read it: other trees keep accepting whatever an exporter wrote there
    if (multiPath && n.attributes.recordCount !== undefined) {
      node.recordCount = number(npath, n.attributes.recordCount, 'recordCount');
      if (!(node.recordCount >= 0 && Number.isFinite(node.recordCount)))
        invalid(npath, `recordCount must be a finite number, 0 or more, got "${n.attributes.recordCount}"`);
    }
    if (n.attributes.score !== undefined)
      node.score = functionName === 'regression' ? number(npath, n.attributes.score, 'score') : n.attributes.score;
    if (n.attributes.defaultChild !== undefined) node.defaultChild = n.attributes.defaultChild;
    const distribution = kids(n, 'ScoreDistribution');
    if (distribution.length > 0) {
      node.distribution = distribution.map((d, k) => ({
        value: d.attributes.value ?? invalid(`${npath}.ScoreDistribution[${k}]`, 'attribute "value" is required'),
        recordCount: number(`${npath}.ScoreDistribution[${k}]`, d.attributes.recordCount, 'recordCount'),
        ...(d.attributes.probability !== undefined
          ? { probability: number(`${npath}.ScoreDistribution[${k}]`, d.attributes.probability, 'probability') }
          : {}),
      }));
    }
    if (kid(n, 'Regression') || kid(n, 'DecisionTree'))
      unsupported(npath, 'embedded models in tree nodes are not supported');
    node.children = kids(n, 'Node').map((c, k) => readNode(c, `${npath}.Node[${k}]`));
    if (node.score === undefined && !node.distribution && node.children.length === 0)
      invalid(npath, 'a leaf Node needs a score or a ScoreDistribution');
    if (node.defaultChild !== undefined && !node.children.some((c) => c.id === node.defaultChild))
      invalid(npath, `defaultChild "${node.defaultChild}" is not the id of one of its children`);
    if (missingValueStrategy === 'defaultChild' && node.children.length > 0 && node.defaultChild === undefined)
      invalid(npath, 'missingValueStrategy="defaultChild" needs a defaultChild on every Node with children');
    return node;
  };
  const tree: TreeModel = {
    kind: 'tree',
    functionName,
    missingValueStrategy,
    noTrueChildStrategy,
    root: readNode(top!, `${path}.Node`),
  };
  checkTreeStrategy(tree, path);
  return tree;
}

function readScorecard(ctx: Context, m: XmlElement, path: string): ScorecardModel {
  const useReasonCodes = (m.attributes.useReasonCodes ?? 'true') === 'true';
  const reasonCodeAlgorithm = attribute(m, path, 'Scorecard.reasonCodeAlgorithm');
  const baselineMethod = attribute(m, path, 'Scorecard.baselineMethod');
  const modelBaseline =
    m.attributes.baselineScore !== undefined ? number(path, m.attributes.baselineScore, 'baselineScore') : undefined;
  const characteristics = kid(m, 'Characteristics');
  if (!characteristics) invalid(path, 'needs Characteristics');
  const list = kids(characteristics!, 'Characteristic').map((c, k) => {
    const cpath = `${path}.Characteristics.Characteristic[${k}]`;
    const attributes = kids(c, 'Attribute').map((a, j) => {
      const apath = `${cpath}.Attribute[${j}]`;
      if (a.attributes.partialScore === undefined)
        unsupported(apath, 'a ComplexPartialScore (or no partialScore) is not supported: give partialScore');
      return {
        predicate: predicateOf(ctx, a, apath),
        partialScore: number(apath, a.attributes.partialScore, 'partialScore'),
        ...(a.attributes.reasonCode !== undefined ? { reasonCode: a.attributes.reasonCode } : {}),
      };
    });
    if (attributes.length === 0) invalid(cpath, 'needs at least one Attribute');
    let baselineScore =
      c.attributes.baselineScore !== undefined
        ? number(cpath, c.attributes.baselineScore, 'baselineScore')
        : modelBaseline;
    if (useReasonCodes && baselineScore === undefined) {
      // Only max and min say how to compute a baseline from the attributes themselves.
      if (baselineMethod === 'max') baselineScore = Math.max(...attributes.map((a) => a.partialScore));
      else if (baselineMethod === 'min') baselineScore = Math.min(...attributes.map((a) => a.partialScore));
      else
        invalid(
          cpath,
          `useReasonCodes needs a baselineScore (on the Characteristic or the Scorecard) when baselineMethod="${baselineMethod}"`,
        );
    }
    if (useReasonCodes) {
      attributes.forEach((a, j) => {
        if (a.reasonCode === undefined && c.attributes.reasonCode === undefined)
          invalid(
            `${cpath}.Attribute[${j}]`,
            'useReasonCodes needs a reasonCode on the Attribute or its Characteristic',
          );
      });
    }
    return {
      name: c.attributes.name ?? `characteristic ${k}`,
      attributes,
      ...(c.attributes.reasonCode !== undefined ? { reasonCode: c.attributes.reasonCode } : {}),
      ...(baselineScore !== undefined ? { baselineScore } : {}),
    };
  });
  if (list.length === 0) invalid(path, 'needs at least one Characteristic');
  return {
    kind: 'scorecard',
    functionName: 'regression',
    initialScore: number(path, m.attributes.initialScore, 'initialScore', 0),
    useReasonCodes,
    reasonCodeAlgorithm,
    baselineMethod,
    characteristics: list,
  };
}

function readMining(
  ctx: Context,
  m: XmlElement,
  path: string,
  functionName: 'regression' | 'classification',
  depth: number,
): MiningModel {
  const segmentation = kid(m, 'Segmentation') ?? invalid(path, 'needs a Segmentation');
  const multipleModelMethod = attribute(segmentation, path, 'Segmentation.multipleModelMethod');
  if ((multipleModelMethod === 'sum' || multipleModelMethod === 'weightedSum') && functionName === 'classification')
    unsupported(path, `multipleModelMethod="${multipleModelMethod}" of a classification is not supported`);
  if (
    ['majorityVote', 'weightedMajorityVote', 'max'].includes(multipleModelMethod) &&
    functionName !== 'classification'
  )
    invalid(path, `multipleModelMethod="${multipleModelMethod}" is for classifications`);
  const missingPredictionTreatment = attribute(segmentation, path, 'Segmentation.missingPredictionTreatment');
  // PMML 4.4: "skipSegment should not be used with modelChain" (a later segment may read what the skipped one outputs)
  if (missingPredictionTreatment === 'skipSegment' && multipleModelMethod === 'modelChain')
    invalid(path, 'missingPredictionTreatment="skipSegment" is not for multipleModelMethod="modelChain"');
  const missingThreshold = number(path, segmentation.attributes.missingThreshold, 'missingThreshold', 1);
  if (!(missingThreshold >= 0 && missingThreshold <= 1))
    invalid(path, `missingThreshold must be a number from 0 to 1, got "${segmentation.attributes.missingThreshold}"`);
  // Fields a model chain's earlier segments output become inputs of the later ones.
  const chained = new Map(ctx.fields);
  const segments: MiningSegment[] = kids(segmentation, 'Segment').map((s, k) => {
    const spath = `${path}.Segmentation.Segment[${k}]`;
    const inner = s.children.find((c) => MODEL_ELEMENTS.includes(c.name) || REFUSED_MODELS.includes(c.name));
    if (!inner) invalid(spath, 'needs a model');
    const segCtx: Context = { path: spath, fields: multipleModelMethod === 'modelChain' ? chained : ctx.fields };
    const local = localTransformations(segCtx, inner!, `${spath}.${inner!.name}`);
    // Inputs are prepared once, by the top model's MiningSchema: a segment that treats them otherwise is refused, not ignored.
    kids(kid(inner!, 'MiningSchema') ?? { name: '', attributes: {}, children: [], text: '' }, 'MiningField').forEach(
      (f, j) => {
        const treatment = [
          'missingValueReplacement',
          'missingValueTreatment',
          'invalidValueTreatment',
          'invalidValueReplacement',
          'outliers',
        ].find((a) => f.attributes[a] !== undefined);
        if (treatment)
          unsupported(
            `${spath}.${inner!.name}.MiningSchema.MiningField[${j}]`,
            `${treatment} in a segment's MiningSchema is not supported: declare it on the top model's`,
          );
      },
    );
    const innerFunction = attribute(inner!, `${spath}.${inner!.name}`, 'model.functionName', functionName);
    const model = readBody(local.ctx, inner!, `${spath}.${inner!.name}`, innerFunction, depth + 1);
    const { outputs, expressions, infos } = readOutputs(
      kid(inner!, 'Output'),
      `${spath}.${inner!.name}.Output`,
      local.ctx.fields,
      model.functionName,
    );
    const targets = targetsOf(inner!, `${spath}.${inner!.name}`, model, []);
    // A chained prediction is a number when the segment is a regression; a category (text) when it classifies.
    if (multipleModelMethod === 'modelChain') {
      for (const info of infos) chained.set(info.name, info);
    }
    return {
      predicate: predicateOf(segCtx, s, spath),
      weight: number(spath, s.attributes.weight, 'weight', 1),
      model,
      outputs,
      ...(local.derived.length > 0 ? { derived: local.derived } : {}),
      ...(targets ? { targets } : {}),
      ...(expressions.length > 0 ? { outputExpressions: expressions } : {}),
    };
  });
  if (segments.length === 0) invalid(path, 'needs at least one Segment');
  const mining: MiningModel = {
    kind: 'mining',
    functionName,
    multipleModelMethod,
    missingPredictionTreatment,
    missingThreshold,
    segments,
  };
  checkSegmentProbabilities(
    mining,
    path,
    kids(segmentation, 'Segment').map((s) => s.attributes.id),
  );
  return mining;
}

function readBody(
  ctx: Context,
  m: XmlElement,
  path: string,
  functionName: 'regression' | 'classification',
  depth: number,
): ModelBody {
  if (REFUSED_MODELS.includes(m.name))
    unsupported(path, `${m.name} is not supported (supported: ${MODEL_ELEMENTS.join(', ')})`);
  if (depth > 8) unsupported(path, 'models nested deeper than 8 levels are not supported');
  switch (m.name) {
    case 'RegressionModel':
      return readRegression(ctx, m, path, functionName);
    case 'TreeModel':
      return readTree(ctx, m, path, functionName);
    case 'Scorecard':
      if (functionName !== 'regression') invalid(path, 'a Scorecard has functionName="regression"');
      return readScorecard(ctx, m, path);
    case 'MiningModel':
      return readMining(ctx, m, path, functionName, depth);
    default:
      return invalid(path, `<${m.name}> is not a model element`);
  }
}

/** What an output field holds, as a field later outputs (and a model chain's later segments) read. */
function outputInfo(o: ModelOutputField, functionName: 'regression' | 'classification', dataType?: string): FieldInfo {
  if (o.feature === 'transformedValue') {
    const type = (
      ['string', 'integer', 'float', 'double', 'boolean'].includes(dataType ?? '') ? dataType : 'double'
    ) as ModelDataType;
    return {
      name: o.name,
      dataType: type,
      optype: type === 'string' || type === 'boolean' ? 'categorical' : 'continuous',
    };
  }
  const numeric = o.feature === 'probability' || (o.feature === 'predictedValue' && functionName === 'regression');
  return { name: o.name, dataType: numeric ? 'double' : 'string', optype: numeric ? 'continuous' : 'categorical' };
}

/** A model's LocalTransformations: its derived fields, and the context its body reads fields in. */
function localTransformations(ctx: Context, m: XmlElement, path: string): { derived: DerivedField[]; ctx: Context } {
  const local = kid(m, 'LocalTransformations');
  if (!local) return { derived: [], ctx };
  const { derived, fields } = readDerivedFields(local, `${path}.LocalTransformations`, ctx.fields);
  return { derived, ctx: { path: ctx.path, fields } };
}

function targetsOf(m: XmlElement, path: string, model: ModelBody, declared: FieldValue[]): TargetSpec | undefined {
  const targets = kid(m, 'Targets');
  return targets
    ? readTargets(targets, `${path}.Targets`, model.functionName, new Set(modelCategories(model, declared)))
    : undefined;
}

function readOutputs(
  output: XmlElement | undefined,
  path: string,
  fields: Context['fields'],
  functionName: 'regression' | 'classification',
): { outputs: ModelOutputField[]; expressions: OutputExpression[]; infos: FieldInfo[] } {
  if (!output) return { outputs: [], expressions: [], infos: [] };
  // transformedValue expressions read the model's fields and the output fields declared before them
  const scope = new Map(fields);
  const expressions: OutputExpression[] = [];
  const infos: FieldInfo[] = [];
  const outputs = kids(output, 'OutputField').map((o, k) => {
    const opath = `${path}.OutputField[${k}]`;
    const name = o.attributes.name ?? invalid(opath, 'attribute "name" is required');
    const feature = attribute(o, opath, 'OutputField.feature');
    if (o.attributes.segmentId !== undefined) unsupported(opath, 'segmentId outputs are not supported');
    const field: ModelOutputField = { name, feature };
    if (feature === 'probability' && o.attributes.value !== undefined) field.value = o.attributes.value;
    if (feature === 'reasonCode') field.rank = number(opath, o.attributes.rank, 'rank', 1);
    const info = outputInfo(field, functionName, o.attributes.dataType);
    if (feature === 'transformedValue') {
      const expression =
        expressionOf(o, opath, scope, new Set(), info.dataType) ??
        invalid(opath, 'feature="transformedValue" needs an expression');
      expressions.push({ output: name, expression });
    } else if (o.children.some((c) => c.name !== 'Extension'))
      unsupported(
        `${opath}.${o.children.find((c) => c.name !== 'Extension')!.name}`,
        `an expression in an OutputField of feature="${feature}" is not supported`,
      );
    scope.set(name, info);
    infos.push(info);
    return field;
  });
  return { outputs, expressions, infos };
}

function readInputs(
  root: XmlElement,
  miningSchema: XmlElement,
  path: string,
): { inputs: ModelInputField[]; target?: string; targetCategories?: FieldValue[]; fields: Context['fields'] } {
  const dictionary = kid(root, 'DataDictionary') ?? invalid('PMML', 'needs a DataDictionary');
  const dataFields = new Map<
    string,
    {
      name: string;
      dataType: ModelDataType;
      optype: OpType;
      values?: FieldValue[];
      missingValues?: FieldValue[];
      invalidValues?: FieldValue[];
      intervals?: ModelInputField['intervals'];
    }
  >();
  kids(dictionary, 'DataField').forEach((f, k) => {
    const fpath = `PMML.DataDictionary.DataField[${k}]`;
    const name = f.attributes.name ?? invalid(fpath, 'attribute "name" is required');
    const { dataType, optype } = fieldTypes(f, fpath, 'string');
    // Value elements list the valid values (no property, or property="valid"), and the values that stand for a
    // missing value (property="missing") or are invalid (property="invalid").
    const byProperty = { valid: [] as FieldValue[], missing: [] as FieldValue[], invalid: [] as FieldValue[] };
    kids(f, 'Value').forEach((v, j) => {
      const vpath = `${fpath}.Value[${j}]`;
      byProperty[attribute(v, vpath, 'Value.property')].push(typed(vpath, dataType, v.attributes.value ?? ''));
    });
    const intervals = kids(f, 'Interval').map((i, j) => readInterval(i, `${fpath}.Interval[${j}]`));
    if (dataFields.has(name)) invalid(fpath, `field "${name}" is declared twice`);
    dataFields.set(name, {
      name,
      dataType,
      optype,
      ...(byProperty.valid.length > 0 ? { values: byProperty.valid } : {}),
      ...(byProperty.missing.length > 0 ? { missingValues: byProperty.missing } : {}),
      ...(byProperty.invalid.length > 0 ? { invalidValues: byProperty.invalid } : {}),
      ...(intervals.length > 0 ? { intervals } : {}),
    });
  });
  const inputs: ModelInputField[] = [];
  let target: string | undefined;
  kids(miningSchema, 'MiningField').forEach((f, k) => {
    const fpath = `${path}.MiningSchema.MiningField[${k}]`;
    const name = f.attributes.name ?? invalid(fpath, 'attribute "name" is required');
    const field = dataFields.get(name) ?? invalid(fpath, `field "${name}" is not in the DataDictionary`);
    const usage = attribute(f, fpath, 'MiningField.usageType');
    if (usage === 'target' || usage === 'predicted') {
      target = name;
      return;
    }
    if (usage !== 'active') return;
    const treatment = attribute(f, fpath, 'MiningField.invalidValueTreatment');
    const input: ModelInputField = {
      name,
      dataType: field.dataType,
      optype: (f.attributes.optype as OpType | undefined) ?? field.optype,
      invalidValueTreatment: treatment,
    };
    if (field.values) input.values = field.values;
    if (field.missingValues) input.missingValues = field.missingValues;
    if (field.invalidValues) input.invalidValues = field.invalidValues;
    if (field.intervals) input.intervals = field.intervals;
    const outliers = attribute(f, fpath, 'MiningField.outliers');
    if (outliers !== 'asIs') {
      if (field.dataType === 'string' || field.dataType === 'boolean')
        invalid(fpath, `outliers="${outliers}" applies to numeric fields; "${name}" is ${field.dataType}`);
      const bound = (which: 'lowValue' | 'highValue') => {
        const text = f.attributes[which];
        if (text === undefined) return undefined;
        const value = Number(text);
        return Number.isFinite(value) ? value : invalid(fpath, `${which}="${text}" is not a number`);
      };
      const [low, high] = [bound('lowValue'), bound('highValue')];
      if (low === undefined && high === undefined) invalid(fpath, `outliers="${outliers}" needs lowValue or highValue`);
      input.outliers = {
        treatment: outliers,
        ...(low !== undefined ? { low } : {}),
        ...(high !== undefined ? { high } : {}),
      };
    }
    if (f.attributes.missingValueReplacement !== undefined)
      input.missingValueReplacement = typed(fpath, field.dataType, f.attributes.missingValueReplacement);
    if (treatment === 'asValue') {
      if (f.attributes.invalidValueReplacement === undefined)
        invalid(fpath, 'invalidValueTreatment="asValue" needs invalidValueReplacement');
      input.invalidValueReplacement = typed(fpath, field.dataType, f.attributes.invalidValueReplacement!);
    }
    inputs.push(input);
  });
  const fields: Context['fields'] = new Map(inputs.map((i) => [i.name, i]));
  return { inputs, target, targetCategories: target ? dataFields.get(target)!.values : undefined, fields };
}

/** Reads a PMML document; throws ModelFileError naming the element at fault. */
export function readPmml(source: string, limits?: XmlLimits): ModelDocument {
  let root: XmlElement;
  try {
    root = parseXml(source, limits);
  } catch (error) {
    if (error instanceof XmlSyntaxError)
      throw new ModelFileError('invalid', `The file is not well-formed XML: ${error.message}`, 'file');
    throw error;
  }
  if (root.name !== 'PMML') invalid(root.name, 'the root element must be <PMML>');
  const models = root.children.filter((c) => MODEL_ELEMENTS.includes(c.name) || REFUSED_MODELS.includes(c.name));
  if (models.length !== 1) invalid('PMML', `needs exactly one model element, found ${models.length}`);
  const m = models[0];
  const path = `PMML.${m.name}`;
  if (REFUSED_MODELS.includes(m.name))
    unsupported(path, `${m.name} is not supported (supported: ${MODEL_ELEMENTS.join(', ')})`);
  if (m.attributes.isScorable === 'false') invalid(path, 'isScorable="false": the model says it cannot score');
  const functionName = attribute(m, path, 'model.functionName');
  const schema = kid(m, 'MiningSchema') ?? invalid(path, 'needs a MiningSchema');
  const { inputs, target, targetCategories, fields } = readInputs(root, schema, path);
  const dictionary = kid(root, 'TransformationDictionary');
  const global = dictionary
    ? readDerivedFields(dictionary, 'PMML.TransformationDictionary', fields)
    : { derived: [], fields };
  const local = localTransformations({ path, fields: global.fields }, m, path);
  const derived = [...global.derived, ...local.derived];
  const model = readBody(local.ctx, m, path, functionName, 0);
  const targets = targetsOf(m, path, model, targetCategories ?? []);
  const categories = modelCategories(model, targetCategories).length;
  if (categories > MAX_CATEGORIES)
    unsupported(path, `${categories} target categories; at most ${MAX_CATEGORIES} are supported`);
  const cells = categories * classificationTreeNodes(model);
  if (cells > MAX_PROBABILITY_CELLS)
    unsupported(
      path,
      `its tree nodes would hold ${cells} probabilities (nodes × categories, twice for the nodes a weightedConfidence or aggregateNodes walk ends on); at most ${MAX_PROBABILITY_CELLS} are supported`,
    );
  const read = readOutputs(kid(m, 'Output'), `${path}.Output`, local.ctx.fields, functionName);
  const expressions = read.expressions;
  let outputs = read.outputs;
  if (outputs.length === 0) {
    // Without an Output element: the prediction under the target's name and, for a classification, a probability per category.
    outputs = [{ name: target ?? 'predictedValue', feature: 'predictedValue' }];
    for (const category of modelCategories(model, targetCategories))
      outputs.push({ name: `probability(${String(category)})`, feature: 'probability', value: String(category) });
  }
  const names = new Set<string>();
  outputs.forEach((o, k) => {
    if (names.has(o.name)) invalid(`${path}.Output.OutputField[${k}]`, `output "${o.name}" is declared twice`);
    names.add(o.name);
    if (o.feature === 'probability' && functionName !== 'classification')
      invalid(`${path}.Output.OutputField[${k}]`, 'probability is an output of a classification');
    if (o.feature === 'reasonCode' && !(model.kind === 'scorecard' && model.useReasonCodes))
      invalid(`${path}.Output.OutputField[${k}]`, 'reasonCode is an output of a Scorecard with useReasonCodes');
  });
  return {
    modelType: m.name,
    functionName,
    inputs,
    outputs,
    model,
    ...(target !== undefined ? { target } : {}),
    ...(targetCategories ? { targetCategories } : {}),
    ...(derived.length > 0 ? { derived } : {}),
    ...(targets ? { targets } : {}),
    ...(expressions.length > 0 ? { outputExpressions: expressions } : {}),
  };
}
