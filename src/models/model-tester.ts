import { normalizeScenarioDocument, type ScenarioDocument, type ScenarioEngine } from '../engine/index.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import type { ModelDocuments } from './model-documents.js';
import type { ModelService } from './model-service.js';

/** What testModelVersion answers: the version run, the inputs as the model read them, and its outputs. */
export interface ModelTestView {
  name: string;
  version: number;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
}

/**
 * testModelVersion: a model version scored on sample input, as debugScenario does for a scenario. The version
 * runs where a scenario's MODEL node runs it (in the owner's sandbox; ONNX in the engine host), with the same
 * limits, through a scenario of three steps built for it: START takes the sample as one MAP, a SCRIPT copies each
 * model input field into a variable of its own (a PMML field name need not be a variable name), and a MODEL node
 * reads them and writes each output. So an input is prepared as in a scenario (missing and invalid value
 * treatment; MODEL_INPUT_INVALID naming the field), and nothing of the registry is special-cased.
 */
export class ModelTester {
  constructor(
    private readonly models: ModelService,
    private readonly documents: ModelDocuments,
    private readonly engine: ScenarioEngine,
  ) {}

  async test(
    ownerId: number,
    name: string,
    version: number | 'latest',
    sample: Record<string, unknown>,
  ): Promise<ModelTestView> {
    const model = await this.models.version(ownerId, name, version);
    const fields = model.inputs.map((input) => input.name);
    const unknown = Object.keys(sample).filter((key) => !fields.includes(key));
    if (unknown.length > 0)
      throw new BadRequestError(
        `Model "${name}" version ${model.version} has no input ${unknown.map((key) => `"${key}"`).join(', ')}; its inputs are ${fields.map((field) => `"${field}"`).join(', ')}.`,
        'VALIDATION_FAILED',
        unknown.map((key) => ({ path: `body.${key}`, message: 'is not an input of the model' })),
      );
    const outputs = model.outputs.map((output) => output.name);
    const scenario = rowScenario(fields, { name, version: model.version, outputs });
    // Versions are immutable and their numbers never reused: owner, name and number name one program.
    const key = `model-test:${ownerId}:${name}@${model.version}`;
    const { document, cacheKey } = await this.documents.resolve(ownerId, scenario, key);
    const compiled = this.engine.compile(cacheKey, document);
    const outcome = await this.engine.run(compiled, { row: sample }, { ownerId, trace: true });
    const result = outcome.result as Record<string, unknown>;
    return {
      name: model.name,
      version: model.version,
      inputs: Object.fromEntries(fields.map((field, k) => [field, result[`in_${k}`] ?? null])),
      outputs: Object.fromEntries(outputs.map((output, k) => [output, result[`out_${k}`] ?? null])),
    };
  }
}

/** The MODEL node of a rowScenario: the model's name and version, and the outputs it writes (as `out_k`). */
interface RowScenarioModel {
  name: string;
  version: number | 'latest';
  outputs: string[];
}

/**
 * START (a row as one MAP) → SCRIPT (each field into `in_k`: a PMML field name need not be a variable name) → MODEL
 * (`in_k` → the field, each output → `out_k`) → END; without `model`, the same scenario without the MODEL node. The
 * tester's scenario, and the benchmarks' (scripts/bench/models.ts, engine-ab.ts: with and without the node).
 */
export function rowScenario(fields: string[], model?: RowScenarioModel): ScenarioDocument {
  const nodes = [
    { id: 'start', type: 'START', name: 'Sample' },
    { id: 'fields', type: 'SCRIPT', name: 'Model inputs' },
    ...(model ? [{ id: 'model', type: 'MODEL', name: model.name }] : []),
    { id: 'end', type: 'END', name: 'Outputs' },
  ];
  const copies = fields.map(
    (field, k) => `in_${k} = row[${JSON.stringify(field)}] === undefined ? null : row[${JSON.stringify(field)}];`,
  );
  const modelNode = model && {
    content: {
      model: model.name,
      version: model.version,
      inputs: Object.fromEntries(fields.map((field, k) => [field, `in_${k}`])),
      outputs: Object.fromEntries(model.outputs.map((output, k) => [output, `out_${k}`])),
    },
  };
  return normalizeScenarioDocument({
    content: { nodes, edges: nodes.slice(1).map((node, k) => ({ from: nodes[k].id, to: node.id })) },
    nodeProperties: {
      start: { content: { inputs: [{ name: 'row', type: { type: 'MAP' }, required: true }] } },
      fields: {
        content: { language: 'javascript', code: copies.join('\n'), outputs: fields.map((_, k) => `in_${k}`) },
      },
      ...(modelNode ? { model: modelNode } : {}),
      end: { content: {} },
    },
  });
}
