/**
 * MODEL node benchmark: what scoring a PMML model in the sandbox costs, for each conformance fixture
 * (test/models/fixtures), against the same scenario without the model (START → SCRIPT spreading the
 * inputs → END), every figure from one run. Also the time to read each file and to compile it.
 * Then the same 100 gradient-boosted trees of depth 3 (test/models/fixtures/onnx/gbm-100.*, from
 * scripts/fixtures/make-onnx-models.py) several ways, in the same run: a plain hand-written JavaScript function
 * (the ceiling), onnxruntime-node one row per call (its public promise API, and the synchronous binding the
 * engine hosts call), the function generated for the PMML model called directly, the PMML model and the ONNX
 * model through a MODEL node (256 runs in flight, and one at a time) beside the same scenario without the node (the
 * engine's own ceiling); and a batch of 10,000 runs of the ONNX scenario submitted at once to the engine.
 * Run: npm run bench:models (env: BENCH_SECONDS per measurement, default 2; BENCH_ONLY=gbm for the trees only).
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  ScenarioEngine,
  normalizeScenarioDocument,
  onnxDocument,
  readPmml,
  type EnginePorts,
  type ModelDocument,
  type ScenarioDocument,
} from '../../src/engine/index.js';
import { modelFunction } from '../../src/engine/models/model-codegen.js';
import type { PmmlModelDocument } from '../../src/engine/models/model-document.js';
import { ChildProcessOnnxInspector } from '../../src/models/onnx-inspector.js';
import { rowScenario } from '../../src/models/model-tester.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const CONCURRENCY = 256;
const FIXTURES = new URL('../../test/models/fixtures/', import.meta.url);

const noPorts: EnginePorts = {
  lookups: { lookup: async () => null, describe: async () => null },
  scenarios: { resolveDeployed: async () => null },
  http: {
    request: async () => {
      throw new Error('no http');
    },
  },
};

/** START (one MAP input) → SCRIPT (spreads it) → [MODEL] → END: the model tester's scenario (src/models/model-tester.ts). */
function scenario(model: ModelDocument, withModel: boolean): ScenarioDocument {
  const fields = model.inputs.map((i) => i.name);
  const node = { name: 'm', version: 'latest' as const, outputs: model.outputs.map((o) => o.name) };
  return { ...rowScenario(fields, withModel ? node : undefined), models: { 'm@latest': model } };
}

async function throughput(
  engine: ScenarioEngine,
  key: string,
  doc: ScenarioDocument,
  rows: Record<string, unknown>[],
  concurrency = CONCURRENCY,
): Promise<number> {
  const compiled = engine.compile(key, doc);
  await engine.run(compiled, { row: rows[0] }, { ownerId: 1 });
  let n = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  const lane = async () => {
    while (performance.now() < end) await engine.run(compiled, { row: rows[n++ % rows.length] }, { ownerId: 1 });
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return n / ((performance.now() - started) / 1000);
}

/** Calls per second of `call` (synchronous or not) over SECONDS, one call at a time. */
async function callRate(call: (k: number) => unknown): Promise<number> {
  let n = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  while (performance.now() < end) {
    for (let k = 0; k < 100; k++) await call(n++);
  }
  return n / ((performance.now() - started) / 1000);
}

interface Tree {
  feature: number[];
  threshold: number[];
  left: number[];
  right: number[];
  value: number[];
}

/** START (row: MAP) → SCRIPT (X, the features as an array) → MODEL (the ONNX model's input X) → END. */
function onnxScenario(model: ModelDocument): ScenarioDocument {
  const nodes = [
    { id: 'start', type: 'START' },
    { id: 'build', type: 'SCRIPT' },
    { id: 'model', type: 'MODEL' },
    { id: 'end', type: 'END' },
  ];
  const document = normalizeScenarioDocument({
    content: { nodes, edges: nodes.slice(1).map((n, k) => ({ from: nodes[k].id, to: n.id })) },
    nodeProperties: {
      start: { content: { inputs: [{ name: 'row', type: { type: 'MAP' }, required: true }] } },
      build: {
        content: {
          language: 'javascript',
          code: 'X = [row.age, row.income, row.debt_ratio, row.months_employed];',
          outputs: ['X'],
        },
      },
      model: { content: { model: 'm', outputs: { limit: 'limit' } } },
      end: { content: {} },
    },
  });
  return { ...document, models: { 'm@latest': model } };
}

/** The same 100 trees four ways (see the header); answers the markdown lines. */
async function gradientBoosting(engine: ScenarioEngine): Promise<string[]> {
  const dir = new URL('../../test/models/fixtures/onnx/', import.meta.url);
  const { rows } = JSON.parse(readFileSync(new URL('gbm-100.expected.json', dir), 'utf8')) as {
    rows: { inputs: Record<string, number> }[];
  };
  const inputs = rows.map((r) => r.inputs);
  const features = inputs.map((r) => [r.age, r.income, r.debt_ratio, r.months_employed]);
  const out: string[] = [
    '| the 100 trees (depth 3) as | evaluations/s, one at a time | evaluations/s, 256 in flight |',
    '|---|---|---|',
  ];
  const line = (what: string, one: number, many: number | null) => {
    out.push(`| ${what} | ${one.toFixed(0)} | ${many === null ? '–' : many.toFixed(0)} |`);
    console.error(out[out.length - 1]);
  };

  // 1. A hand-written function: each tree an array walk, leaves summed as float32 the way the model stores them.
  const { trees, base } = JSON.parse(readFileSync(new URL('gbm-100.trees.json', dir), 'utf8')) as {
    trees: Tree[];
    base: number;
  };
  const f32 = Math.fround;
  const score = (x: number[]) => {
    let total = 0;
    for (const t of trees) {
      let n = 0;
      while (t.feature[n] >= 0) n = f32(x[t.feature[n]]) <= t.threshold[n] ? t.left[n] : t.right[n];
      total = f32(total + t.value[n]);
    }
    return f32(total + base);
  };
  let sink = 0;
  line(
    'a hand-written JavaScript function (this process)',
    await callRate((k) => {
      sink += score(features[k % features.length]);
    }),
    null,
  );

  // 2. onnxruntime-node, one row per call: the public API (a promise per call), and the synchronous binding.
  const require = createRequire(import.meta.url);
  const ort = require('onnxruntime-node') as typeof import('onnxruntime-node');
  const bytes = readFileSync(new URL('gbm-100.onnx', dir));
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const tensors = features.map((x) => new ort.Tensor('float32', Float32Array.from(x), [1, 4]));
  line(
    'onnxruntime-node, InferenceSession.run, one row per call',
    await callRate(async (k) => {
      await session.run({ X: tensors[k % tensors.length] });
    }),
    null,
  );
  const { binding, initOrt } = require('onnxruntime-node/dist/binding') as {
    binding: { InferenceSession: new () => { loadModel(...args: unknown[]): void; run(...args: unknown[]): unknown } };
    initOrt(): void;
  };
  initOrt();
  const raw = new binding.InferenceSession();
  raw.loadModel(bytes.buffer, bytes.byteOffset, bytes.byteLength, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  line(
    'onnxruntime-node, synchronous binding (as the engine hosts call it), one row per call',
    await callRate((k) => raw.run({ X: tensors[k % tensors.length] }, { limit: null }, {})),
    null,
  );
  const batch = new ort.Tensor('float32', Float32Array.from(features.flat()), [features.length, 4]);
  const perRow = await callRate(async () => {
    await session.run({ X: batch });
  });
  line(
    `onnxruntime-node, InferenceSession.run, ${features.length} rows per call (rows/s)`,
    perRow * features.length,
    null,
  );

  // 3. The PMML model's generated function called directly (what the sandbox runs, without the engine around it),
  // then the PMML and the ONNX model through a MODEL node.
  const pmml = readPmml(readFileSync(new URL('gbm-100.pmml', dir), 'utf8'));
  const generated = new Function(
    'rt',
    `return ${modelFunction(pmml as PmmlModelDocument, {
      reads: Object.fromEntries(pmml.inputs.map((i) => [i.name, `$$vars[${JSON.stringify(i.name)}]`])),
      outputs: pmml.outputs.map((o) => o.name),
      nodeId: 'model',
    })}`,
  )({ err: (code: string, message: string) => new Error(`${code}: ${message}`) }) as (v: unknown) => number[];
  line(
    "the PMML model's generated function, called directly (this process)",
    await callRate((k) => {
      sink += generated(inputs[k % inputs.length])[0];
    }),
    null,
  );
  line(
    'the same scenario without the MODEL node (runs/s: the engine without a model)',
    await throughput(engine, 'gbm-none-1', scenario(pmml, false), inputs, 1),
    await throughput(engine, 'gbm-none', scenario(pmml, false), inputs),
  );
  line(
    'PMML through a MODEL node (runs/s)',
    await throughput(engine, 'gbm-pmml-1', scenario(pmml, true), inputs, 1),
    await throughput(engine, 'gbm-pmml', scenario(pmml, true), inputs),
  );
  const answer = await new ChildProcessOnnxInspector(20_000).inspect(fileURLToPath(new URL('gbm-100.onnx', dir)));
  if (!('ok' in answer)) throw new Error(answer.refused.message);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const onnx: ModelDocument = {
    ...onnxDocument(answer.ok, sha256),
    model: { kind: 'onnx', sha256, file: bytes.toString('base64') },
  };
  const doc = onnxScenario(onnx);
  line(
    'ONNX through a MODEL node (runs/s)',
    await throughput(engine, 'gbm-onnx-1', doc, inputs, 1),
    await throughput(engine, 'gbm-onnx', doc, inputs),
  );

  // 4. A batch of 10,000 runs of the ONNX scenario, submitted at once (the bulk lane, as a batch's elements are).
  const compiled = engine.compile('gbm-onnx', doc);
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: 10_000 }, (_, k) =>
      engine.run(compiled, { row: inputs[k % inputs.length] }, { ownerId: 1, lane: 'bulk' }),
    ),
  );
  const ms = performance.now() - started;
  out.push(
    '',
    `A batch of 10,000 runs of the ONNX scenario submitted at once to the engine (bulk lane, no HTTP, no records): ${ms.toFixed(0)} ms = ${(10_000_000 / ms).toFixed(0)} runs/s; ${results.filter((r) => typeof r.result.limit === 'number').length} scored.`,
  );
  console.error(out[out.length - 1]);
  if (sink === 42) console.error('');
  return out;
}

const engine = new ScenarioEngine({ ports: noPorts });
const lines: string[] = [
  '| model | file KB | read ms | compile ms | runs/s without the node | runs/s with it | ratio |',
  '|---|---|---|---|---|---|---|',
];
const ONLY_GBM = process.env.BENCH_ONLY === 'gbm';
try {
  for (const file of readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.pmml') && !ONLY_GBM)
    .sort()) {
    const text = readFileSync(new URL(file, FIXTURES), 'utf8');
    const name = file.replace('.pmml', '');
    const { rows } = JSON.parse(readFileSync(new URL(`${name}.expected.json`, FIXTURES), 'utf8')) as {
      rows: { inputs: Record<string, unknown> }[];
    };
    let t0 = performance.now();
    const model = readPmml(text);
    const readMs = performance.now() - t0;
    t0 = performance.now();
    engine.compile(`compile-${name}`, scenario(model, true));
    const compileMs = performance.now() - t0;
    const inputs = rows.map((r) => r.inputs);
    const without = await throughput(engine, `without-${name}`, scenario(model, false), inputs);
    const withModel = await throughput(engine, `with-${name}`, scenario(model, true), inputs);
    lines.push(
      `| ${name} | ${(text.length / 1024).toFixed(0)} | ${readMs.toFixed(1)} | ${compileMs.toFixed(1)} | ${without.toFixed(0)} | ${withModel.toFixed(0)} | ${(withModel / without).toFixed(2)} |`,
    );
    console.error(lines[lines.length - 1]);
  }
  lines.push('', ...(await gradientBoosting(engine)));
} finally {
  await engine.dispose();
}
console.log(lines.join('\n'));
