import type { ModelDocument, ModelInputField, OnnxModel, TensorInfo } from './model-document.js';

const q = JSON.stringify;

/** Values per row of a tensor: the product of its dimensions after the batch (fixed for inputs, checked at upload). */
function rowSize(shape: (number | string)[]): number {
  return shape.slice(1).reduce<number>((n, d) => n * Number(d), 1);
}

/**
 * An ONNX MODEL node's part in the sandbox (node kind 10 of the runtime, src/engine/sandbox/bootstrap-source.ts):
 * `prep` turns each input variable into the tensor's values for one row, checked against the element type the
 * model declares; the runtime stacks the rows of every run of the crossing that reached the model, calls the
 * engine host's ONNX port once (ONNX Runtime, outside the sandbox, within the crossing's time limit), and writes
 * each run's outputs: a number or string when the output holds one value per row, else the row's values as a flat
 * array (a classifier's probabilities by class index). A missing value (null, absent) is NaN for float inputs
 * (tree ensembles take NaN as missing) and MODEL_INPUT_INVALID for int64 and string inputs, like a value of the
 * wrong type or count.
 */
export function onnxFunction(
  doc: ModelDocument & { model: OnnxModel },
  options: { reads: Record<string, string>; outputs: string[]; nodeId: string },
): string {
  const prep = doc.inputs.map((input, k) =>
    tensorFunction(`T${k}`, input, input.tensor ?? { elementType: 'float64', shape: ['N'] }),
  );
  const feeds = doc.inputs.map((input, k) => `T${k}(${options.reads[input.name] ?? 'undefined'})`);
  // an input whose first dimension is fixed at 1 takes one row per call: such a model is called run by run
  const single = doc.inputs.some((input) => input.tensor?.shape[0] === 1);
  return `(function () {
function BAD(name, x, why) { throw rt.err("MODEL_INPUT_INVALID", "model input \\"" + name + "\\" of node '" + ${q(options.nodeId)} + "' is invalid: " + (typeof x === "string" ? JSON.stringify(x) : Array.isArray(x) ? "an array of " + x.length : String(x)) + " (" + why + ")"); }
${prep.join('\n')}
return { key: ${q(doc.model.sha256)}, fetch: ${q(options.outputs)}, single: ${single}, prep: function ($$vars) { return [${feeds.join(', ')}]; } };
})()`;
}

/** One input variable → a flat array of the tensor's values for one row. */
function tensorFunction(name: string, input: ModelInputField, tensor: TensorInfo): string {
  const size = rowSize(tensor.shape);
  const field = q(input.name);
  let element: string;
  switch (tensor.elementType) {
    case 'float32':
    case 'float64':
      element = `if (v === null || v === undefined) return NaN; if (typeof v !== "number") BAD(${field}, raw, "a number is expected"); return v;`;
      break;
    case 'int64':
      element = `if (typeof v !== "number" || !Number.isSafeInteger(v)) BAD(${field}, raw, "a whole number is expected"); return v;`;
      break;
    default:
      element = `if (typeof v !== "string") BAD(${field}, raw, "a string is expected"); return v;`;
  }
  return `function ${name}(raw) {
const E = (v) => { ${element} };
const flat = Array.isArray(raw) ? raw.flat(${Math.max(1, tensor.shape.length - 1)}) : [raw];
if (flat.length !== ${size}) BAD(${field}, raw, ${q(`${size} value${size === 1 ? '' : 's'} per row expected (shape [${tensor.shape.join(', ')}])`)});
const out = new Array(${size});
for (let k = 0; k < ${size}; k++) out[k] = E(flat[k]);
return out;
}`;
}
