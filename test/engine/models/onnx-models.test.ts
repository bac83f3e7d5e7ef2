import { afterAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ScenarioEngine, onnxDocument, type ModelDocument } from '../../../src/engine/index.js';
import { ChildProcessOnnxInspector } from '../../../src/models/onnx-inspector.js';
import { chain, fakePorts, input, script } from '../support/scenario-builder.js';

/**
 * ONNX models (scripts/fixtures/make-onnx-models.py) scored through a MODEL node: ONNX Runtime in the engine host,
 * called from the sandbox. Every row agrees with onnxruntime in Python (relative 1e-6) and with the model's own
 * arithmetic in numpy (within the tolerance the script checked, float32 rounding for the tree ensembles).
 */

const FIXTURES = new URL('../../models/fixtures/onnx/', import.meta.url);
const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());
const inspector = new ChildProcessOnnxInspector(20_000);

interface Expected {
  numpyTolerance: number;
  outputs: string[];
  rows: { inputs: Record<string, unknown>; onnxruntime: Record<string, unknown>; numpy: Record<string, unknown> }[];
}

/** The document the registry stores for a fixture, with its file embedded as the resolver embeds it. */
async function onnxFixture(name: string): Promise<ModelDocument> {
  const bytes = readFileSync(new URL(`${name}.onnx`, FIXTURES));
  const answer = await inspector.inspect(fileURLToPath(new URL(`${name}.onnx`, FIXTURES)));
  if (!('ok' in answer)) throw new Error(answer.refused.message);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { ...onnxDocument(answer.ok, sha256), model: { kind: 'onnx', sha256, file: bytes.toString('base64') } };
}

/** START takes the row; a SCRIPT builds each model input from it; the MODEL node scores. */
function modelScenario(model: ModelDocument, build: string, outputs: string[]) {
  const fields = model.inputs.map((i) => i.name);
  const doc = chain(
    [input('row', 'MAP')],
    [
      script('build', build, fields),
      {
        id: 'model',
        type: 'MODEL',
        settings: { model: 'm', version: 1, outputs: Object.fromEntries(outputs.map((o) => [o, `out_${o}`])) },
      },
    ],
    { outputs: outputs.map((o) => `out_${o}`) },
  );
  return { ...doc, models: { 'm@1': model } };
}

function disagreement(actual: unknown, expected: unknown, tolerance: number): string | null {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return `expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
    for (let k = 0; k < expected.length; k++) {
      const problem = disagreement(actual[k], expected[k], tolerance);
      if (problem) return `[${k}] ${problem}`;
    }
    return null;
  }
  if (typeof expected === 'number') {
    if (typeof actual !== 'number') return `expected ${expected}, got ${String(actual)}`;
    const scale = Math.max(1, Math.abs(expected), Math.abs(actual));
    return Math.abs(actual - expected) <= tolerance * scale ? null : `expected ${expected}, got ${actual}`;
  }
  return actual === expected ? null : `expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

const FEATURES = 'X = [row.age, row.income, row.debt_ratio, row.months_employed];';
const CASES: [string, string][] = [
  ['linear', FEATURES],
  ['mlp', FEATURES],
  ['tree-classifier', FEATURES],
  ['gbm-100', FEATURES],
  ['typed-inputs', 'employment = row.employment; months = [row.months];'],
];

describe('ONNX models through ONNX Runtime in the engine hosts', () => {
  it.each(CASES)('%s: every row agrees with onnxruntime (1e-6) and with numpy', async (name, build) => {
    const model = await onnxFixture(name);
    const { rows, outputs, numpyTolerance } = JSON.parse(
      readFileSync(new URL(`${name}.expected.json`, FIXTURES), 'utf8'),
    ) as Expected;
    expect(rows.length).toBe(200);
    const compiled = engine.compile(`onnx-${name}`, modelScenario(model, build, outputs));
    const results = await Promise.all(rows.map((row) => engine.run(compiled, { row: row.inputs }, { ownerId: 1 })));
    const problems: string[] = [];
    results.forEach(({ result }, k) => {
      for (const output of outputs) {
        const vsRuntime = disagreement(result[`out_${output}`], rows[k].onnxruntime[output], 1e-6);
        if (vsRuntime) problems.push(`row ${k}, ${output} (onnxruntime): ${vsRuntime}`);
        const vsNumpy = disagreement(
          result[`out_${output}`],
          [rows[k].numpy[output]].flat(2).length === 1
            ? [rows[k].numpy[output]].flat(2)[0]
            : [rows[k].numpy[output]].flat(2),
          numpyTolerance,
        );
        if (vsNumpy) problems.push(`row ${k}, ${output} (numpy): ${vsNumpy}`);
      }
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it("counts the model call against the run's time limit: a model that runs for seconds fails the run in time", async () => {
    const limited = new ScenarioEngine({ ports: fakePorts(), limits: { timeoutMs: 300 } });
    try {
      const model = await onnxFixture('slow');
      const doc = modelScenario(model, 'X = [row.x];', ['y']);
      const compiled = limited.compile('onnx-slow', doc);
      const started = Date.now();
      // two runs that queue together: the fixed batch dimension (1) makes them separate calls
      const outcomes = await Promise.allSettled([
        limited.run(compiled, { row: { x: 0.001 } }, { ownerId: 1 }),
        limited.run(compiled, { row: { x: 0.002 } }, { ownerId: 1 }),
      ]);
      expect(Date.now() - started).toBeLessThan(8_000);
      // the host is killed by its watchdog past the limit; the other run, run again elsewhere, meets the same end
      expect(
        outcomes.map((o) =>
          o.status === 'rejected' ? `${(o.reason as { code?: string }).code}: ${(o.reason as Error).message}` : 'ok',
        ),
      ).toEqual(
        Array(2).fill('TIME_LIMIT_EXCEEDED: The run exceeded its CPU time limit of 300 ms in node "model" (MODEL)'),
      );
    } finally {
      await limited.dispose();
    }
  });
});
