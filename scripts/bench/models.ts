/**
 * MODEL node benchmark: what scoring a PMML model in the sandbox costs, for each conformance fixture
 * (test/models/fixtures), against the same scenario without the model (START → SCRIPT spreading the
 * inputs → END), every figure from one run. Also the time to read each file and to compile it.
 * Run: npm run bench:models (env: BENCH_SECONDS per measurement, default 2).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { ScenarioEngine, normalizeScenarioDocument, readPmml, type EnginePorts, type ModelDocument, type ScenarioDocument } from '../../src/engine/index.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const CONCURRENCY = 256;
const FIXTURES = new URL('../../test/models/fixtures/', import.meta.url);

const noPorts: EnginePorts = {
  lookups: { lookup: async () => null, describe: async () => null },
  scenarios: { resolveDeployed: async () => null },
  http: { request: async () => { throw new Error('no http'); } },
};

/** START (one MAP input) → SCRIPT (spreads it) → [MODEL] → END. */
function scenario(model: ModelDocument, withModel: boolean): ScenarioDocument {
  const fields = model.inputs.map((i) => i.name);
  const nodes = [
    { id: 'start', type: 'START' }, { id: 'spread', type: 'SCRIPT' },
    ...(withModel ? [{ id: 'model', type: 'MODEL' }] : []), { id: 'end', type: 'END' },
  ];
  const outputs = Object.fromEntries(model.outputs.map((o, k) => [o.name, `out${k}`]));
  const document = normalizeScenarioDocument({
    content: { nodes, edges: nodes.slice(1).map((n, k) => ({ from: nodes[k].id, to: n.id })) },
    nodeProperties: {
      start: { content: { inputs: [{ name: 'row', type: { type: 'MAP' }, required: true }] } },
      spread: { content: { language: 'javascript', code: fields.map((f) => `${f} = row[${JSON.stringify(f)}] === undefined ? null : row[${JSON.stringify(f)}];`).join('\n'), outputs: fields } },
      ...(withModel ? { model: { content: { model: 'm', outputs } } } : {}),
      end: { content: {} },
    },
  });
  return { ...document, models: { 'm@latest': model } };
}

async function throughput(engine: ScenarioEngine, key: string, doc: ScenarioDocument, rows: Record<string, unknown>[]): Promise<number> {
  const compiled = engine.compile(key, doc);
  await engine.run(compiled, { row: rows[0] }, { ownerId: 1 });
  let n = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  const lane = async () => { while (performance.now() < end) await engine.run(compiled, { row: rows[n++ % rows.length] }, { ownerId: 1 }); };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return n / ((performance.now() - started) / 1000);
}

const engine = new ScenarioEngine({ ports: noPorts });
const lines: string[] = ['| model | file KB | read ms | compile ms | runs/s without the node | runs/s with it | ratio |', '|---|---|---|---|---|---|---|'];
try {
  for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.pmml')).sort()) {
    const text = readFileSync(new URL(file, FIXTURES), 'utf8');
    const name = file.replace('.pmml', '');
    const { rows } = JSON.parse(readFileSync(new URL(`${name}.expected.json`, FIXTURES), 'utf8')) as { rows: { inputs: Record<string, unknown> }[] };
    let t0 = performance.now();
    const model = readPmml(text);
    const readMs = performance.now() - t0;
    t0 = performance.now();
    engine.compile(`compile-${name}`, scenario(model, true));
    const compileMs = performance.now() - t0;
    const inputs = rows.map((r) => r.inputs);
    const without = await throughput(engine, `without-${name}`, scenario(model, false), inputs);
    const withModel = await throughput(engine, `with-${name}`, scenario(model, true), inputs);
    lines.push(`| ${name} | ${(text.length / 1024).toFixed(0)} | ${readMs.toFixed(1)} | ${compileMs.toFixed(1)} | ${without.toFixed(0)} | ${withModel.toFixed(0)} | ${(withModel / without).toFixed(2)} |`);
    console.error(lines[lines.length - 1]);
  }
} finally {
  await engine.dispose();
}
console.log(lines.join('\n'));
