/**
 * A model as the engine compiles it: what the PMML reader (pmml-reader.ts) makes of a PMML file, plain
 * JSON so that the service can store it beside the file and embed it in a scenario document at compile
 * time. Values of fields are already typed (numbers for numeric fields, strings otherwise).
 */

export type FieldValue = string | number | boolean;
export type ModelDataType = 'string' | 'integer' | 'float' | 'double' | 'boolean';
export type OpType = 'continuous' | 'categorical' | 'ordinal';

/** An ONNX graph input or output: its element type and shape (a name for a symbolic dimension, the batch first). */
export interface TensorInfo { elementType: 'float32' | 'float64' | 'int64' | 'string'; shape: (number | string)[] }

export interface ModelInputField {
  name: string;
  /** an ONNX model's input: the tensor it feeds (absent for PMML) */
  tensor?: TensorInfo;
  dataType: ModelDataType;
  optype: OpType;
  /** valid values of a categorical field (from DataDictionary Value elements); absent: any value */
  values?: FieldValue[];
  /** valid ranges of a continuous field (DataDictionary Interval elements); absent: any number */
  intervals?: { min?: number; max?: number; minClosed: boolean; maxClosed: boolean }[];
  /** MiningSchema treatment of a missing value: the replacement, when there is one */
  missingValueReplacement?: FieldValue;
  /** MiningSchema treatment of an invalid value */
  invalidValueTreatment: 'returnInvalid' | 'asIs' | 'asMissing' | 'asValue';
  invalidValueReplacement?: FieldValue;
}

export interface ModelOutputField {
  name: string;
  /** an ONNX model's output: the tensor it reads (absent for PMML) */
  tensor?: TensorInfo;
  feature: 'predictedValue' | 'probability' | 'reasonCode';
  /** the category of a probability */
  value?: FieldValue;
  /** the rank of a reason code (1 = the first) */
  rank?: number;
}

export type Predicate =
  | { op: 'true' } | { op: 'false' }
  | { op: 'simple'; field: string; operator: 'equal' | 'notEqual' | 'lessThan' | 'lessOrEqual' | 'greaterThan' | 'greaterOrEqual' | 'isMissing' | 'isNotMissing'; value?: FieldValue }
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
  normalizationMethod: 'none' | 'softmax' | 'logit' | 'exp' | 'simplemax';
  tables: RegressionTable[];
}

export interface TreeNode {
  id?: string;
  predicate: Predicate;
  score?: FieldValue;
  distribution?: { value: FieldValue; recordCount: number; probability?: number }[];
  defaultChild?: string;
  children: TreeNode[];
}

export interface TreeModel {
  kind: 'tree';
  functionName: 'regression' | 'classification';
  missingValueStrategy: 'none' | 'lastPrediction' | 'nullPrediction' | 'defaultChild';
  noTrueChildStrategy: 'returnNullPrediction' | 'returnLastPrediction';
  root: TreeNode;
}

export interface ScorecardAttribute { predicate: Predicate; partialScore: number; reasonCode?: string }
export interface ScorecardCharacteristic { name: string; reasonCode?: string; baselineScore?: number; attributes: ScorecardAttribute[] }
export interface ScorecardModel {
  kind: 'scorecard';
  functionName: 'regression';
  initialScore: number;
  useReasonCodes: boolean;
  reasonCodeAlgorithm: 'pointsBelow' | 'pointsAbove';
  baselineMethod: 'max' | 'min' | 'mean' | 'neutral' | 'other';
  characteristics: ScorecardCharacteristic[];
}

export interface MiningSegment { predicate: Predicate; weight: number; model: ModelBody; outputs: ModelOutputField[] }
export interface MiningModel {
  kind: 'mining';
  functionName: 'regression' | 'classification';
  multipleModelMethod: 'sum' | 'average' | 'weightedAverage' | 'majorityVote' | 'weightedMajorityVote' | 'selectFirst' | 'modelChain';
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
}

/** A PMML model's document: what the code generator (model-codegen.ts) compiles. */
export type PmmlModelDocument = ModelDocument & { model: ModelBody };
