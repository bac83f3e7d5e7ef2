import { modelFunction } from '../models/model-codegen.js';
import type { ModelBody, ModelDocument, OnnxModel } from '../models/model-document.js';
import { onnxFunction } from '../models/onnx-codegen.js';
import { modelReferenceKey, type ModelNodeSettings } from '../types.js';
import type { NodeContext } from './node-context.js';

const q = JSON.stringify;

/**
 * A MODEL node: the model its settings name must have been resolved into the document (the engine does
 * no I/O); every input and output it maps must be the model's; each model input reads a variable that
 * some upstream node defines. Generates the model's sandbox function (src/engine/models/model-codegen.ts).
 */
export function compileModelNode(
  ctx: NodeContext,
  s: ModelNodeSettings,
  models: Record<string, ModelDocument>,
): { source: string; reads: string[]; onnx?: OnnxModel } {
  const id = ctx.node.id;
  const base = `nodeProperties.${id}.content`;
  const model = models[modelReferenceKey(s)];
  if (!model) {
    const which = s.version === undefined || s.version === 'latest' ? 'any version' : `version ${s.version}`;
    ctx.diagnostics.push({
      code: 'MODEL_NOT_FOUND',
      message: `Model node "${id}" uses model "${s.model}", which has no ${which}`,
      nodeId: id,
      path: `${base}.model`,
    });
    return { source: 'null', reads: [] };
  }
  const inputNames = new Set(model.inputs.map((i) => i.name));
  for (const field of Object.keys(s.inputs ?? {})) {
    if (!inputNames.has(field)) {
      ctx.diagnostics.push({
        code: 'MODEL_INPUT_UNKNOWN',
        message: `Model node "${id}" maps "${field}", which is not an input of model "${s.model}" (inputs: ${[...inputNames].join(', ')})`,
        nodeId: id,
        path: `${base}.inputs.${field}`,
      });
    }
  }
  const outputNames = new Set(model.outputs.map((o) => o.name));
  const written = new Map<string, string>();
  for (const [field, variable] of Object.entries(s.outputs)) {
    if (!outputNames.has(field)) {
      ctx.diagnostics.push({
        code: 'MODEL_OUTPUT_UNKNOWN',
        message: `Model node "${id}" reads output "${field}", which model "${s.model}" does not have (outputs: ${[...outputNames].join(', ')})`,
        nodeId: id,
        path: `${base}.outputs.${field}`,
      });
    }
    if (written.has(variable)) {
      ctx.diagnostics.push({
        code: 'MODEL_DUPLICATE_OUTPUT',
        message: `Model node "${id}" writes "${variable}" twice (outputs "${written.get(variable)}" and "${field}")`,
        nodeId: id,
        path: `${base}.outputs.${field}`,
      });
    }
    written.set(variable, field);
  }
  const reads: Record<string, string> = {};
  const variables = new Set<string>();
  for (const input of model.inputs) {
    const variable = s.inputs?.[input.name] ?? input.name;
    ctx.reference(variable, s.inputs?.[input.name] !== undefined ? `${base}.inputs.${input.name}` : `${base}.inputs`);
    reads[input.name] = `$$vars[${q(variable)}]`;
    variables.add(variable);
  }
  if (ctx.diagnostics.some((d) => d.nodeId === id)) return { source: 'null', reads: [...variables] };
  const options = { reads, outputs: Object.keys(s.outputs), nodeId: id };
  if (model.model.kind === 'onnx') {
    const onnx = model.model;
    if (onnx.file === undefined) {
      ctx.diagnostics.push({
        code: 'MODEL_NOT_FOUND',
        message: `Model node "${id}" uses ONNX model "${s.model}", whose file was not resolved`,
        nodeId: id,
        path: `${base}.model`,
      });
      return { source: 'null', reads: [...variables] };
    }
    return { source: onnxFunction({ ...model, model: onnx }, options), reads: [...variables], onnx };
  }
  return { source: modelFunction({ ...model, model: model.model as ModelBody }, options), reads: [...variables] };
}
