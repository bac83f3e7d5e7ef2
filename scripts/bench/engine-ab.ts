/**
 * The engine of two checkouts in one process, in alternating rounds: the 100-tree PMML model of bench:models
 * (test/models/fixtures/onnx/gbm-100.pmml) through a MODEL node, 256 runs in flight, one tenant. On a machine
 * shared with other work, rounds of one process a few seconds apart are the fairest comparison there is; each side
 * also reports the CPU its hosts and this process spent per run (from /proc), which the machine's load moves less
 * than the rates.
 * Run: BENCH_A=/path/to/base/checkout BENCH_B=/path/to/branch/checkout npx tsx scripts/bench/engine-ab.ts
 * (env: BENCH_WHICH=pmml|none — with the MODEL node or the same scenario without it; BENCH_ROUNDS, default 6;
 * BENCH_SECONDS per round, default 1.5; BENCH_A_POOL / BENCH_B_POOL, JSON pool settings of each side.)
 * Both checkouts need their node_modules (a symbolic link to this one's will do).
 */
import { readFileSync } from 'node:fs';
import { processCpuMs } from './proc-cpu.js';
import { rowScenario } from '../../src/models/model-tester.js';

type Engine = typeof import('../../src/engine/index.js');

const WHICH = process.env.BENCH_WHICH ?? 'pmml';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5);
const CONCURRENCY = 256;
const here = new URL('../../', import.meta.url).pathname;

interface Side {
  name: string;
  dispose: () => Promise<void>;
  hostPids: () => number[];
  runFor: (seconds: number) => Promise<number>;
  rates: number[];
  hostMicros: number[];
  callerMicros: number[];
}

async function side(name: string, checkout: string, pool: string | undefined): Promise<Side> {
  const engineModule = (await import(`${checkout}/src/engine/index.ts`)) as Engine;
  const { ScenarioEngine, readPmml } = engineModule;
  const dir = `${checkout}/test/models/fixtures/onnx/`;
  const rows = (
    JSON.parse(readFileSync(`${dir}gbm-100.expected.json`, 'utf8')) as { rows: { inputs: Record<string, unknown> }[] }
  ).rows.map((r) => r.inputs);
  const model = readPmml(readFileSync(`${dir}gbm-100.pmml`, 'utf8'));
  const withModel = WHICH === 'pmml';
  // The document is built once, by this checkout (the model tester's scenario): its shape is the same for both.
  const fields = model.inputs.map((i) => i.name);
  const node = { name: 'm', version: 'latest' as const, outputs: model.outputs.map((o: { name: string }) => o.name) };
  const document = rowScenario(fields, withModel ? node : undefined);
  const engine = new ScenarioEngine({
    ports: {
      lookups: { lookup: async () => null, describe: async () => null },
      scenarios: { resolveDeployed: async () => null },
      http: {
        request: async () => {
          throw new Error('no http');
        },
      },
    },
    pool: pool ? JSON.parse(pool) : undefined,
  });
  const compiled = engine.compile('ab', { ...document, models: { 'm@latest': model } });
  let n = 0;
  const runFor = async (seconds: number) => {
    const first = n;
    const started = performance.now();
    const end = started + seconds * 1000;
    const lane = async () => {
      while (performance.now() < end) await engine.run(compiled, { row: rows[n++ % rows.length] }, { ownerId: 1 });
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    return n - first;
  };
  await runFor(1);
  return {
    name,
    dispose: () => engine.dispose(),
    hostPids: () => engine.hostPids(),
    runFor,
    rates: [],
    hostMicros: [],
    callerMicros: [],
  };
}

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

const a = await side('A', process.env.BENCH_A ?? here, process.env.BENCH_A_POOL);
const b = await side('B', process.env.BENCH_B ?? here, process.env.BENCH_B_POOL);
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round % 2 ? [b, a] : [a, b]) {
      const pids = s.hostPids();
      const host0 = cpuOf(pids);
      const caller0 = processCpuMs(process.pid);
      const started = performance.now();
      const runs = await s.runFor(SECONDS);
      const ms = performance.now() - started;
      s.rates.push((runs / ms) * 1000);
      s.hostMicros.push(((cpuOf(pids) - host0) * 1000) / runs);
      s.callerMicros.push(((processCpuMs(process.pid) - caller0) * 1000) / runs);
    }
  }
  for (const s of [a, b]) {
    console.log(
      `${s.name} (${WHICH}): median ${median(s.rates).toFixed(0)} runs/s [${s.rates.map((r) => (r / 1000).toFixed(1)).join(' ')}]k; host CPU ${median(s.hostMicros).toFixed(1)} µs/run; caller CPU ${median(s.callerMicros).toFixed(1)} µs/run`,
    );
  }
  console.log(
    `B/A ${(median(b.rates) / median(a.rates)).toFixed(2)}; per round ${b.rates.map((r, k) => (r / a.rates[k]).toFixed(2)).join(' ')}`,
  );
} finally {
  await a.dispose();
  await b.dispose();
}
