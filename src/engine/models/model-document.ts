/**
 * A model as the engine compiles it: what the PMML reader (pmml-reader.ts) makes of a PMML file, plain
 * JSON so that the service can store it beside the file and embed it in a scenario document at compile
 * time. Values of fields are already typed (numbers for numeric fields, strings otherwise).
 */

export type FieldValue = string | number | boolean;
export type ModelDataType = 'string' | 'integer' | 'float' | 'double' | 'boolean';
export type OpType = 'continuous' | 'categorical' | 'ordinal';

/** An ONNX graph input or output: its element type and shape (a name for a symbolic dimension, the batch first). */
export interface TensorInfo {
  elementType: 'float32' | 'float64' | 'int64' | 'string';
  shape: (number | string)[];
}

export interface ModelInputField {
  name: string;
  /** an ONNX model's input: the tensor it feeds (absent for PMML) */
  tensor?: TensorInfo;
  dataType: ModelDataType;
  optype: OpType;
  /** valid values of a categorical field (from DataDictionary Value elements); absent: any value */
  values?: FieldValue[];
  /** values that stand for a missing value (DataDictionary Value elements with property="missing") */
  missingValues?: FieldValue[];
  /** values that are invalid (DataDictionary Value elements with property="invalid") */
  invalidValues?: FieldValue[];
  /** valid ranges of a continuous field (DataDictionary Interval elements); absent: any number */
  intervals?: { min?: number; max?: number; minClosed: boolean; maxClosed: boolean }[];
  /** MiningSchema treatment of a missing value: the replacement, when there is one */
  missingValueReplacement?: FieldValue;
  /** MiningSchema treatment of an invalid value */
  invalidValueTreatment: 'returnInvalid' | 'asIs' | 'asMissing' | 'asValue';
  invalidValueReplacement?: FieldValue;
  /**
   * MiningSchema treatment of a valid numeric value below `low` or above `high` (absent: as is): treated as missing,
   * or replaced by the bound it passed.
   */
  outliers?: { treatment: 'asMissingValues' | 'asExtremeValues'; low?: number; high?: number };
}

export interface ModelOutputField {
  name: string;
  /** an ONNX model's output: the tensor it reads (absent for PMML) */
  tensor?: TensorInfo;
  feature: 'predictedValue' | 'probability' | 'reasonCode' | 'transformedValue';
  /** the category of a probability */
  value?: FieldValue;
  /** the rank of a reason code (1 = the first) */
  rank?: number;
}

export type Predicate =
  | { op: 'true' }
  | { op: 'false' }
  | {
      op: 'simple';
      field: string;
      operator:
        | 'equal'
        | 'notEqual'
        | 'lessThan'
        | 'lessOrEqual'
        | 'greaterThan'
        | 'greaterOrEqual'
        | 'isMissing'
        | 'isNotMissing';
      value?: FieldValue;
    }
  | { op: 'set'; field: string; isIn: boolean; values: FieldValue[] }
  | { op: 'compound'; booleanOperator: 'and' | 'or' | 'xor' | 'surrogate'; predicates: Predicate[] };

export interface RegressionTable {
  intercept: number;
  targetCategory?: FieldValue;
  numeric: { field: string; exponent: number; coefficient: number }[];
  categorical: { field: string; value: FieldValue; coefficient: number }[];
}

export interface RegressionModel {
  kind: 'regression';
  functionName: 'regression' | 'classification';
  normalizationMethod: 'none' | 'softmax' | 'logit' | 'exp' | 'simplemax' | 'probit' | 'cloglog' | 'loglog' | 'cauchit';
  tables: RegressionTable[];
}

export interface TreeNode {
  id?: string;
  predicate: Predicate;
  /** Node@recordCount: the training records that reached the node (what weightedConfidence and aggregateNodes weigh by) */
  recordCount?: number;
  score?: FieldValue;
  distribution?: { value: FieldValue; recordCount: number; probability?: number }[];
  defaultChild?: string;
  children: TreeNode[];
}

export interface TreeModel {
  kind: 'tree';
  functionName: 'regression' | 'classification';
  missingValueStrategy:
    | 'none'
    | 'lastPrediction'
    | 'nullPrediction'
    | 'defaultChild'
    | 'weightedConfidence'
    | 'aggregateNodes';
  noTrueChildStrategy: 'returnNullPrediction' | 'returnLastPrediction';
  root: TreeNode;
}

interface ScorecardAttribute {
  predicate: Predicate;
  partialScore: number;
  reasonCode?: string;
}
interface ScorecardCharacteristic {
  name: string;
  reasonCode?: string;
  baselineScore?: number;
  attributes: ScorecardAttribute[];
}
export interface ScorecardModel {
  kind: 'scorecard';
  functionName: 'regression';
  initialScore: number;
  useReasonCodes: boolean;
  reasonCodeAlgorithm: 'pointsBelow' | 'pointsAbove';
  baselineMethod: 'max' | 'min' | 'mean' | 'neutral' | 'other';
  characteristics: ScorecardCharacteristic[];
}

export interface MiningSegment {
  predicate: Predicate;
  weight: number;
  model: ModelBody;
  outputs: ModelOutputField[];
  /** the segment model's LocalTransformations, in evaluation order */
  derived?: DerivedField[];
  /** the segment model's Targets */
  targets?: TargetSpec;
  /** expressions of the segment's transformedValue outputs */
  outputExpressions?: OutputExpression[];
}
export interface MiningModel {
  kind: 'mining';
  functionName: 'regression' | 'classification';
  multipleModelMethod:
    | 'sum'
    | 'average'
    | 'weightedAverage'
    | 'majorityVote'
    | 'weightedMajorityVote'
    | 'selectFirst'
    | 'modelChain'
    | 'median'
    | 'weightedMedian'
    | 'max'
    | 'weightedSum';
  /**
   * Segmentation@missingPredictionTreatment: what a segment that applies and predicts nothing does
   * (segment-missing-predictions.ts). Absent in documents stored before it was read: `continue`, PMML's default.
   */
  missingPredictionTreatment?: 'returnMissing' | 'skipSegment' | 'continue';
  /** Segmentation@missingThreshold, 0 to 1: the share of the applying segments' weight that may predict nothing. Absent: 1. */
  missingThreshold?: number;
  segments: MiningSegment[];
}

export type ModelBody = RegressionModel | TreeModel | ScorecardModel | MiningModel;

/**
 * An ONNX model: run by ONNX Runtime in the engine host, outside the sandbox (src/engine/pool/onnx-sessions.mjs).
 * The registry stores it without the file; whoever embeds it in a document for compiling adds `file` (base64), which
 * the compiled program carries to the hosts beside its source.
 */
export interface OnnxModel {
  kind: 'onnx';
  /** SHA-256 of the file, hex: the hosts' key for its session */
  sha256: string;
  /** the file, base64: present in a document resolved for compiling */
  file?: string;
}

export interface ModelDocument {
  /** absent: PMML (documents stored before ONNX) */
  format?: 'PMML' | 'ONNX';
  /** the PMML model element, e.g. TreeModel; `ONNX` for an ONNX model */
  modelType: string;
  functionName: 'regression' | 'classification';
  /** the predicted field of the MiningSchema, when it names one */
  target?: string;
  /** categories of a classification's target, in DataDictionary order */
  targetCategories?: FieldValue[];
  inputs: ModelInputField[];
  outputs: ModelOutputField[];
  model: ModelBody | OnnxModel;
  /** TransformationDictionary and the model's LocalTransformations, in evaluation order (dependencies first) */
  derived?: DerivedField[];
  /** the model's Targets (rescaling, default values, prior probabilities) */
  targets?: TargetSpec;
  /** expressions of the transformedValue outputs */
  outputExpressions?: OutputExpression[];
}

/**
 * PMML expressions (DerivedField, OutputField): plain data, typed at read time. A value is missing when null.
 * `mapMissingTo` is what the expression gives when an input it reads is missing, `defaultValue` what it
 * gives when it finds nothing (no bin, no row) or, for Apply, when the function's result is missing.
 */
export type Expression =
  | { op: 'field'; field: string; mapMissingTo?: FieldValue }
  | { op: 'constant'; value: FieldValue | null }
  | {
      op: 'normContinuous';
      field: string;
      points: { orig: number; norm: number }[];
      outliers: 'asIs' | 'asMissingValues' | 'asExtremeValues';
      mapMissingTo?: number;
    }
  | { op: 'normDiscrete'; field: string; value: FieldValue; mapMissingTo?: number }
  | {
      op: 'discretize';
      field: string;
      bins: { value: FieldValue; min?: number; max?: number; minClosed: boolean; maxClosed: boolean }[];
      mapMissingTo?: FieldValue;
      defaultValue?: FieldValue;
    }
  | {
      op: 'mapValues';
      fields: string[];
      rows: { keys: FieldValue[]; value: FieldValue }[];
      mapMissingTo?: FieldValue;
      defaultValue?: FieldValue;
    }
  | {
      op: 'apply';
      function: string;
      args: Expression[];
      mapMissingTo?: FieldValue;
      defaultValue?: FieldValue;
      invalidValueTreatment: 'returnInvalid' | 'asIs' | 'asMissing';
    };

export interface DerivedField {
  name: string;
  dataType: ModelDataType;
  optype: OpType;
  expression: Expression;
}

export interface OutputExpression {
  output: string;
  expression: Expression;
}

/**
 * Targets of a model: a regression's prediction is clipped to [min, max], then multiplied by rescaleFactor
 * and added rescaleConstant, then cast to an integer; `defaultValue` is the prediction when the model makes
 * none; `priors` (priorProbability by category) the distribution of a classification that makes none.
 */
export interface TargetSpec {
  min?: number;
  max?: number;
  rescaleFactor: number;
  rescaleConstant: number;
  castInteger?: 'round' | 'ceiling' | 'floor';
  defaultValue?: number;
  priors?: { value: FieldValue; probability: number }[];
}

/** A PMML model's document: what the code generator (model-codegen.ts) compiles. */
export type PmmlModelDocument = ModelDocument & { model: ModelBody };
