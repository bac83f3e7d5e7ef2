import type { ModelDataType, ModelInputField, OpType } from './model-document.js';
import { number, oneOf } from './pmml-values.js';
import type { XmlElement } from './xml-parser.js';

/**
 * The enumerated attributes the PMML readers (pmml-reader.ts, pmml-transformations.ts) read, in one table: for each
 * element and attribute, the values this engine runs, PMML 4.4's default, and the values PMML defines that it does
 * not run. A refused value is `unsupported` (422, naming it); a value PMML does not define is `invalid` (400).
 */

interface Choice<T extends string> {
  allowed: readonly T[];
  fallback: T;
  refused: readonly string[];
}
const choice = <T extends string>(allowed: readonly T[], fallback: T, refused: readonly string[] = []): Choice<T> => ({
  allowed,
  fallback,
  refused,
});

const DATA_TYPES = ['string', 'integer', 'float', 'double', 'boolean'] as const;
const YEARS = ['0', '1960', '1970', '1980'];
const TEMPORAL_TYPES = [
  'date',
  'time',
  'dateTime',
  ...YEARS.map((year) => `dateDaysSince[${year}]`),
  'timeSeconds',
  ...YEARS.map((year) => `dateTimeSecondsSince[${year}]`),
];
const COMPARISONS = ['equal', 'notEqual', 'lessThan', 'lessOrEqual', 'greaterThan', 'greaterOrEqual'] as const;

const CHOICES = {
  'model.functionName': choice(['regression', 'classification'] as const, 'regression', [
    'clustering',
    'associationRules',
    'sequences',
    'timeSeries',
    'mixed',
  ]),
  'field.dataType': choice(DATA_TYPES, 'string', TEMPORAL_TYPES),
  'field.optype': choice(['continuous', 'categorical', 'ordinal'] as const, 'continuous'),
  'SimplePredicate.operator': choice([...COMPARISONS, 'isMissing', 'isNotMissing'] as const, 'equal'),
  'SimpleSetPredicate.booleanOperator': choice(['isIn', 'isNotIn'] as const, 'isIn'),
  'CompoundPredicate.booleanOperator': choice(['and', 'or', 'xor', 'surrogate'] as const, 'and'),
  'RegressionModel.normalizationMethod': choice(
    ['none', 'softmax', 'logit', 'exp', 'simplemax', 'probit', 'cloglog', 'loglog', 'cauchit'] as const,
    'none',
  ),
  'TreeModel.missingValueStrategy': choice(
    ['none', 'lastPrediction', 'nullPrediction', 'defaultChild', 'weightedConfidence', 'aggregateNodes'] as const,
    'none',
  ),
  'TreeModel.noTrueChildStrategy': choice(
    ['returnNullPrediction', 'returnLastPrediction'] as const,
    'returnNullPrediction',
  ),
  'Scorecard.reasonCodeAlgorithm': choice(['pointsBelow', 'pointsAbove'] as const, 'pointsBelow'),
  'Scorecard.baselineMethod': choice(['max', 'min', 'mean', 'neutral', 'other'] as const, 'other'),
  'Segmentation.multipleModelMethod': choice(
    [
      'sum',
      'average',
      'weightedAverage',
      'majorityVote',
      'weightedMajorityVote',
      'selectFirst',
      'modelChain',
      'median',
      'weightedMedian',
      'max',
      'weightedSum',
    ] as const,
    'selectFirst',
    ['selectAll'],
  ),
  'Segmentation.missingPredictionTreatment': choice(['returnMissing', 'skipSegment', 'continue'] as const, 'continue'),
  'OutputField.feature': choice(
    ['predictedValue', 'probability', 'reasonCode', 'transformedValue'] as const,
    'predictedValue',
    [
      'predictedDisplayValue',
      'decision',
      'entityId',
      'clusterId',
      'affinity',
      'standardError',
      'standardDeviation',
      'ruleValue',
      'confidence',
      'residual',
      'antecedent',
      'consequent',
      'rule',
      'ruleId',
      'warning',
    ],
  ),
  'MiningField.usageType': choice(
    ['active', 'target', 'predicted', 'supplementary', 'group', 'order', 'frequencyWeight', 'analysisWeight'] as const,
    'active',
  ),
  'MiningField.invalidValueTreatment': choice(
    ['returnInvalid', 'asIs', 'asMissing', 'asValue'] as const,
    'returnInvalid',
  ),
  'MiningField.outliers': choice(['asIs', 'asMissingValues', 'asExtremeValues'] as const, 'asIs'),
  'Value.property': choice(['valid', 'invalid', 'missing'] as const, 'valid'),
  'Apply.invalidValueTreatment': choice(['returnInvalid', 'asIs', 'asMissing'] as const, 'returnInvalid'),
  'Interval.closure': choice(['openClosed', 'openOpen', 'closedOpen', 'closedClosed'] as const, 'closedClosed'),
  'NormContinuous.outliers': choice(['asIs', 'asMissingValues', 'asExtremeValues'] as const, 'asIs'),
  'Target.castInteger': choice(['round', 'ceiling', 'floor'] as const, 'round'),
};

type Key = keyof typeof CHOICES;
type Value<K extends Key> = (typeof CHOICES)[K]['allowed'][number];

/**
 * The value of an enumerated attribute (the key names it after the dot), or its default when absent; `fallback`
 * replaces the table's default where the context gives one (a segment's functionName is its parent's).
 */
export function attribute<K extends Key>(element: XmlElement, path: string, key: K, fallback?: Value<K>): Value<K> {
  const { allowed, refused, fallback: standard } = CHOICES[key] as Choice<Value<K>>;
  const name = key.slice(key.indexOf('.') + 1);
  return oneOf(path, element.attributes[name], name, allowed, fallback ?? standard, refused);
}

/**
 * The dataType and optype of a DataField or DerivedField: a field without an optype is categorical when it holds
 * text or booleans, continuous otherwise. `dataTypeFallback`: PMML's default differs by element.
 */
export function fieldTypes(
  element: XmlElement,
  path: string,
  dataTypeFallback: ModelDataType,
): { dataType: ModelDataType; optype: OpType } {
  const dataType = attribute(element, path, 'field.dataType', dataTypeFallback);
  const textual = dataType === 'string' || dataType === 'boolean';
  return { dataType, optype: attribute(element, path, 'field.optype', textual ? 'categorical' : 'continuous') };
}

/** An Interval element (of a DataField, of a DiscretizeBin): its margins and which ends it holds. */
export function readInterval(interval: XmlElement, path: string): NonNullable<ModelInputField['intervals']>[number] {
  const closure = attribute(interval, path, 'Interval.closure');
  const margin = (name: 'leftMargin' | 'rightMargin', as: 'min' | 'max') =>
    interval.attributes[name] === undefined ? {} : { [as]: number(path, interval.attributes[name], name) };
  return {
    ...margin('leftMargin', 'min'),
    ...margin('rightMargin', 'max'),
    minClosed: closure.startsWith('closed'),
    maxClosed: closure.endsWith('Closed'),
  };
}

/** The dataType an expression element declares (Constant, Discretize, MapValues), or `otherwise`. */
export function declaredType(
  element: XmlElement,
  path: string,
  otherwise: ModelDataType | undefined,
): ModelDataType | undefined {
  return element.attributes.dataType === undefined ? otherwise : attribute(element, path, 'field.dataType');
}
