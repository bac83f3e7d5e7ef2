/**
 * Engine benchmark: our engine vs @gorules/zen-engine vs plain JavaScript on the reference credit decision.
 * Run: npx tsx scripts/bench/engine.ts   (optional env: BENCH_SECONDS=2 per measurement, BENCH_SCENARIOS=1000)
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { ZenEngine } from '@gorules/zen-engine';
import { ScenarioEngine, type EnginePorts } from '../../src/engine/index.js';
import { decideByHand, pickResult, referenceJdm, referenceScenario, sampleInputs, type CreditInputs } from './reference-scenario.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const SCENARIOS = Number(process.env.BENCH_SCENARIOS ?? 1000);
const CONCURRENCY = 256;

// a real GC before memory readings, without requiring `node --expose-gc`
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const noPorts: EnginePorts = {
  lookups: { lookup: async () => null, describe: async () => null },
  scenarios: { resolveDeployed: async () => null },
  http: { request: async () => { throw new Error('no http'); } },
};

type Evaluate = (input: CreditInputs) => Promise<unknown>;

async function sequential(evaluate: Evaluate, inputs: CreditInputs[]): Promise<{ rate: number; latencies: number[] }> {
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  while (performance.now() < end) {
    for (let k = 0; k < 100; k++) {
      const t0 = performance.now();
      await evaluate(inputs[n++ % inputs.length]);
      latencies.push(performance.now() - t0);
    }
  }
  return { rate: n / SECONDS, latencies };
}

async function concurrent(evaluate: Evaluate, inputs: CreditInputs[]): Promise<number> {
  let n = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  // a clock check, not a timer: evaluations that resolve at once never yield to the timer queue
  const worker = async () => { while (performance.now() < end) await evaluate(inputs[n++ % inputs.length]); };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return n / ((performance.now() - started) / 1000);
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function main(): Promise<void> {
  const inputs = sampleInputs(1000);
  const engine = new ScenarioEngine({ ports: noPorts, cacheSize: SCENARIOS + 10 });
  const compiled = engine.compile('reference', referenceScenario());
  const zen = new ZenEngine();
  const zenDecision = zen.createDecision(referenceJdm());

  const ours: Evaluate = (input) => engine.run(compiled, input as unknown as Record<string, unknown>, { ownerId: 1 });
  const theirs: Evaluate = (input) => zenDecision.evaluate(input);
  const byHand: Evaluate = async (input) => decideByHand(input);

  // the three must agree
  const outcomes = new Map<string, number>();
  for (const input of inputs) {
    const expected = JSON.stringify(decideByHand(input));
    const a = JSON.stringify(pickResult(((await ours(input)) as { result: Record<string, unknown> }).result));
    const b = JSON.stringify(pickResult(((await theirs(input)) as { result: Record<string, unknown> }).result));
    if (a !== expected || b !== expected) throw new Error(`Results differ for ${JSON.stringify(input)}:\n engine ${a}\n zen    ${b}\n hand   ${expected}`);
    const decision = JSON.parse(expected).decision as string;
    outcomes.set(decision, (outcomes.get(decision) ?? 0) + 1);
  }
  console.log(`All three agree on ${inputs.length} applications (${[...outcomes].map(([k, v]) => `${k} ${v}`).join(', ')}).`);

  // warm up
  await sequential(ours, inputs); await sequential(theirs, inputs);

  const oursSeq = await sequential(ours, inputs);
  const zenSeq = await sequential(theirs, inputs);
  const handSeq = await sequential(byHand, inputs);
  const oursConc = await concurrent(ours, inputs);
  const zenConc = await concurrent(theirs, inputs);
  const handConc = await concurrent(byHand, inputs);

  const rows = [
    ['engine (isolated-vm)', oursSeq.rate, oursConc],
    ['@gorules/zen-engine', zenSeq.rate, zenConc],
    ['plain JavaScript', handSeq.rate, handConc],
  ] as const;
  console.log(`\nEvaluations per second (${SECONDS} s each, concurrency ${CONCURRENCY}):`);
  for (const [name, seq, conc] of rows) console.log(`  ${name.padEnd(22)} sequential ${fmt(seq).padStart(10)}   concurrent ${fmt(conc).padStart(10)}`);
  console.log(`\nengine / zen: sequential ${(oursSeq.rate / zenSeq.rate).toFixed(1)}x, concurrent ${(oursConc / zenConc).toFixed(1)}x (vs zen's best ${(Math.max(oursSeq.rate, oursConc) / Math.max(zenSeq.rate, zenConc)).toFixed(1)}x)`);
  console.log(`engine / plain JS: sequential ${((oursSeq.rate / handSeq.rate) * 100).toFixed(1)}%`);
  console.log(`engine latency per evaluation: p50 ${(percentile(oursSeq.latencies, 50) * 1000).toFixed(1)} µs, p99 ${(percentile(oursSeq.latencies, 99) * 1000).toFixed(1)} µs`);
  console.log(`zen latency per evaluation:    p50 ${(percentile(zenSeq.latencies, 50) * 1000).toFixed(1)} µs, p99 ${(percentile(zenSeq.latencies, 99) * 1000).toFixed(1)} µs`);

  // memory for many compiled scenario versions
  gc();
  const before = process.memoryUsage();
  const isolateBefore = engine.sandboxHeap()?.used ?? 0;
  const t0 = performance.now();
  for (let v = 1; v <= SCENARIOS; v++) engine.compile(`version-${v}`, referenceScenario(v));
  const compileMs = performance.now() - t0;
  gc();
  const after = process.memoryUsage();
  const isolateAfter = engine.sandboxHeap()?.used ?? 0;
  const last = engine.compile(`version-${SCENARIOS}`, referenceScenario(SCENARIOS));
  await engine.run(last, inputs[0] as unknown as Record<string, unknown>, { ownerId: 1 });
  console.log(`\n${SCENARIOS} distinct compiled scenarios: compile ${(compileMs / SCENARIOS).toFixed(2)} ms each; RSS +${mb(after.rss - before.rss)}, ` +
    `host heap +${mb(after.heapUsed - before.heapUsed)}, sandbox heap +${mb(isolateAfter - isolateBefore)} (RSS now ${mb(after.rss)})`);

  engine.dispose();
  zen.dispose();
}

await main();
