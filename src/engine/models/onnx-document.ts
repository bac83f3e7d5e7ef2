import type { ModelDataType, ModelDocument, TensorInfo } from './model-document.js';

/** An ONNX graph input or output, as ONNX Runtime describes it (src/engine/pool/onnx-sessions.mjs, describeOnnx). */
interface OnnxTensorInfo extends TensorInfo {
  name: string;
}
/** A loaded ONNX file's graph inputs and tensor outputs, and the outputs left out (not tensors). */
export interface OnnxDescription {
  inputs: OnnxTensorInfo[];
  outputs: OnnxTensorInfo[];
  skippedOutputs: { name: string; reason: string }[];
}

const DATA_TYPES: Record<TensorInfo['elementType'], ModelDataType> = {
  float32: 'float',
  float64: 'double',
  int64: 'integer',
  string: 'string',
};

function rowSize(shape: (number | string)[]): number {
  return shape.slice(1).reduce<number>((n, d) => n * Number(d), 1);
}

/**
 * What the registry stores for an ONNX file: its inputs and outputs as model fields (each with its tensor), and the
 * file's sha256 (the engine hosts' key for its session). A classifier is recognised by its outputs, as the
 * ai.onnx.ml classifiers write them: a label (int64 or string, one per row) and probabilities (floats, several per
 * row): the label is the `predictedValue`, the probabilities the `probability` (an array by class index). Every
 * other output is a `predictedValue`.
 */
export function onnxDocument(description: OnnxDescription, sha256: string): ModelDocument {
  const { inputs, outputs } = description;
  const label = outputs.find(
    (o) => (o.elementType === 'int64' || o.elementType === 'string') && rowSize(o.shape) === 1,
  );
  const probabilities = outputs.find(
    (o) => (o.elementType === 'float32' || o.elementType === 'float64') && rowSize(o.shape) > 1,
  );
  const classification = label !== undefined && probabilities !== undefined;
  return {
    format: 'ONNX',
    modelType: 'ONNX',
    functionName: classification ? 'classification' : 'regression',
    inputs: inputs.map(({ name, elementType, shape }) => ({
      name,
      tensor: { elementType, shape },
      dataType: DATA_TYPES[elementType],
      optype: elementType === 'string' ? 'categorical' : 'continuous',
      invalidValueTreatment: 'returnInvalid',
    })),
    outputs: outputs.map(({ name, elementType, shape }) => ({
      name,
      tensor: { elementType, shape },
      feature: classification && name === probabilities.name ? 'probability' : 'predictedValue',
    })),
    model: { kind: 'onnx', sha256 },
  };
}
