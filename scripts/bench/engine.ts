/**
 * Engine benchmark: our engine vs @gorules/zen-engine vs plain JavaScript on the reference credit decision,
 * every figure and ratio from one run. Run: npm run bench:engine
 * (env: BENCH_SECONDS per measurement, default 2; BENCH_SCENARIOS compiled versions for the memory figure, default 1000;
 * ENGINE_HOSTS / ENGINE_HOSTS_PER_TENANT as for the service).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { ZenEngine } from '@gorules/zen-engine';
import { loadConfig } from '../../src/config/config.js';
import { defaultEngineHosts, defaultHostsPerTenant } from '../../src/engine/pool/pool-size.js';
import { ScenarioEngine, normalizeScenarioDocument, type EnginePorts } from '../../src/engine/index.js';
import {
  decideByHand,
  pickResult,
  referenceJdm,
  referenceScenario,
  sampleInputs,
  type CreditInputs,
} from './reference-scenario.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const SCENARIOS = Number(process.env.BENCH_SCENARIOS ?? 1000);
const CONCURRENCY = 256;
const OWNER = 1;

// a real GC before memory readings, without requiring `node --expose-gc`
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const noPorts: EnginePorts = {
  lookups: { lookup: async () => null, describe: async () => null },
  scenarios: { resolveDeployed: async () => null },
  http: {
    request: async () => {
      throw new Error('no http');
    },
  },
};

type Evaluate = (input: CreditInputs) => Promise<unknown>;

async function sequential(
  evaluate: Evaluate,
  inputs: CreditInputs[],
  seconds = SECONDS,
): Promise<{ rate: number; latencies: number[] }> {
  const latencies: number[] = [];
  const started = performance.now();
  const end = started + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    for (let k = 0; k < 100; k++) {
      const t0 = performance.now();
      await evaluate(inputs[n++ % inputs.length]);
      latencies.push(performance.now() - t0);
    }
  }
  return { rate: n / ((performance.now() - started) / 1000), latencies };
}

async function concurrent(evaluate: Evaluate, inputs: CreditInputs[]): Promise<number> {
  let n = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  // a clock check, not a timer: evaluations that resolve at once never yield to the timer queue
  const lane = async () => {
    while (performance.now() < end) await evaluate(inputs[n++ % inputs.length]);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return n / ((performance.now() - started) / 1000);
}

/** Plain synchronous calls in a loop: what a hand-written decision costs with nothing around it. */
function handWritten(inputs: CreditInputs[]): number {
  let n = 0;
  let sink = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  while (performance.now() < end) {
    for (let k = 0; k < 1000; k++) sink += decideByHand(inputs[n++ % inputs.length]).limitFactor;
  }
  if (sink < 0) console.log(sink);
  return n / ((performance.now() - started) / 1000);
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, APP_ENV: process.env.APP_ENV ?? 'local' });
  const hosts = config.engine.hosts ?? defaultEngineHosts();
  const hostsPerTenant = config.engine.hostsPerTenant ?? defaultHostsPerTenant(hosts);
  const inputs = sampleInputs(1000);
  const engine = new ScenarioEngine({ ports: noPorts, cacheSize: SCENARIOS + 10, pool: config.engine });
  const compiled = engine.compile('reference', referenceScenario());
  const zen = new ZenEngine();
  const zenDecision = zen.createDecision(referenceJdm());

  const ours: Evaluate = (input) =>
    engine.run(compiled, input as unknown as Record<string, unknown>, { ownerId: OWNER });
  const theirs: Evaluate = (input) => zenDecision.evaluate(input);

  // the three must agree
  const outcomes = new Map<string, number>();
  for (const input of inputs) {
    const expected = JSON.stringify(decideByHand(input));
    const a = JSON.stringify(pickResult(((await ours(input)) as { result: Record<string, unknown> }).result));
    const b = JSON.stringify(pickResult(((await theirs(input)) as { result: Record<string, unknown> }).result));
    if (a !== expected || b !== expected)
      throw new Error(`Results differ for ${JSON.stringify(input)}:\n engine ${a}\n zen    ${b}\n hand   ${expected}`);
    const decision = JSON.parse(expected).decision as string;
    outcomes.set(decision, (outcomes.get(decision) ?? 0) + 1);
  }
  console.log(
    `All three agree on ${inputs.length} applications (${[...outcomes].map(([k, v]) => `${k} ${v}`).join(', ')}).`,
  );
  console.log(
    `Engine pool: ${hosts} host processes, at most ${hostsPerTenant} per tenant (this benchmark is one tenant).`,
  );

  // warm up
  await sequential(ours, inputs, 1);
  await sequential(theirs, inputs, 1);
  await concurrent(ours, inputs);

  const oursSeq = await sequential(ours, inputs);
  const zenSeq = await sequential(theirs, inputs);
  const before = engine.poolStats()!;
  const oursConc = await concurrent(ours, inputs);
  const after = engine.poolStats()!;
  const zenConc = await concurrent(theirs, inputs);
  const hand = handWritten(inputs);

  // the cost of one crossing: a scenario that does nothing (START → END), awaited one at a time
  const empty = engine.compile(
    'empty',
    normalizeScenarioDocument({
      content: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: 'end', type: 'END' },
        ],
        edges: [{ from: 'start', to: 'end' }],
      },
      nodeProperties: { start: { id: 'start', type: 'START', content: { inputs: [] } } },
    }),
  );
  const emptyBefore = engine.poolStats()!;
  const emptySeq = await sequential(() => engine.run(empty, {}, { ownerId: OWNER }), inputs, 1);
  const emptyAfter = engine.poolStats()!;
  const insideCrossingUs =
    ((emptyAfter.crossingMs - emptyBefore.crossingMs) / (emptyAfter.crossings - emptyBefore.crossings)) * 1000;
  const roundTripUs = percentile(emptySeq.latencies, 50) * 1000;

  // a host's death: the time until a run answers again, when that host was the only one (worst case: a new host
  // must start) and when it was one of the pool's (the others answer while it is replaced)
  const recovery = async (hosts: number): Promise<number> => {
    const small = new ScenarioEngine({ ports: noPorts, pool: { ...config.engine, hosts } });
    try {
      const compiled = small.compile('reference', referenceScenario());
      const once = () => small.run(compiled, inputs[0] as unknown as Record<string, unknown>, { ownerId: OWNER });
      await once();
      process.kill(small.hostPids()[0], 'SIGKILL');
      const began = performance.now();
      for (;;) {
        try {
          await once();
          break;
        } catch {
          /* the run that was in flight on the dying host */
        }
      }
      return performance.now() - began;
    } finally {
      await small.dispose();
    }
  };
  const recoveryAlone = await recovery(1);
  const recoveryPool = await recovery(hosts);

  const zenBest = Math.max(zenSeq.rate, zenConc);
  const p50 = percentile(oursSeq.latencies, 50) * 1000;
  const p99 = percentile(oursSeq.latencies, 99) * 1000;
  const crossings = after.crossings - before.crossings;
  const items = after.items - before.items;
  const messages = after.messages - before.messages;

  console.log(`\nEvaluations per second (${SECONDS} s each):`);
  console.log(
    `  ${'engine'.padEnd(24)} awaited one at a time ${fmt(oursSeq.rate).padStart(10)}   ${CONCURRENCY} in flight ${fmt(oursConc).padStart(10)}`,
  );
  console.log(
    `  ${'@gorules/zen-engine'.padEnd(24)} awaited one at a time ${fmt(zenSeq.rate).padStart(10)}   ${CONCURRENCY} in flight ${fmt(zenConc).padStart(10)}`,
  );
  console.log(`  ${'plain JavaScript'.padEnd(24)} synchronous loop      ${fmt(hand).padStart(10)}`);
  console.log(
    `\nLatency per evaluation, awaited one at a time: engine p50 ${p50.toFixed(1)} µs, p99 ${p99.toFixed(1)} µs; ` +
      `zen p50 ${(percentile(zenSeq.latencies, 50) * 1000).toFixed(1)} µs, p99 ${(percentile(zenSeq.latencies, 99) * 1000).toFixed(1)} µs`,
  );
  console.log(
    `Crossings with ${CONCURRENCY} in flight: ${fmt(items)} evaluations in ${fmt(crossings)} crossings (${(items / Math.max(crossings, 1)).toFixed(1)} per crossing, ` +
      `${(items / Math.max(messages, 1)).toFixed(1)} per message to a host), ${(((after.crossingMs - before.crossingMs) / Math.max(crossings, 1)) * 1000).toFixed(1)} µs per crossing`,
  );
  console.log(
    `A host killed (SIGKILL) to the next answer: ${recoveryAlone.toFixed(1)} ms when it was the only host (a new one starts), ${recoveryPool.toFixed(1)} ms with ${hosts} hosts`,
  );
  console.log(
    `Cost of one crossing (an empty scenario, awaited one at a time): ${insideCrossingUs.toFixed(1)} µs inside the host, ${roundTripUs.toFixed(1)} µs round trip (p50) from the caller`,
  );

  const goals = [
    [
      `${CONCURRENCY} in flight: engine ÷ zen's best (${fmt(zenBest)}/s)`,
      oursConc / zenBest,
      '≥ 10×',
      oursConc / zenBest >= 10,
      'x',
    ],
    [`${CONCURRENCY} in flight: engine ÷ plain JavaScript`, oursConc / hand, '≥ 10 %', oursConc / hand >= 0.1, '%'],
    [
      'one at a time: engine ÷ zen one at a time',
      oursSeq.rate / zenSeq.rate,
      '≥ 10×',
      oursSeq.rate / zenSeq.rate >= 10,
      'x',
    ],
    ['one at a time: engine p99 per evaluation', p99, '< 100 µs', p99 < 100, 'µs'],
    ['a host killed: next answer, the only host', recoveryAlone, '< 1 s', recoveryAlone < 1000, 'ms'],
  ] as const;
  console.log('\nGoals:');
  for (const [name, value, goal, met, unit] of goals) {
    const shown =
      unit === '%'
        ? `${(value * 100).toFixed(1)} %`
        : unit === 'x'
          ? `${value.toFixed(1)}×`
          : `${value.toFixed(1)} ${unit}`;
    console.log(`  ${name.padEnd(52)} ${shown.padStart(10)}   goal ${goal.padEnd(8)} ${verdict(met)}`);
  }
  console.log(
    `  (also: engine ${CONCURRENCY} in flight ÷ zen ${CONCURRENCY} in flight ${(oursConc / zenConc).toFixed(1)}×, engine one at a time ÷ plain JavaScript ${((oursSeq.rate / hand) * 100).toFixed(2)} %)`,
  );

  // memory and compile time for many compiled scenario versions (compiled once each; instantiated on first run)
  gc();
  const memoryBefore = process.memoryUsage();
  const t0 = performance.now();
  for (let v = 1; v <= SCENARIOS; v++) engine.compile(`version-${v}`, referenceScenario(v));
  const compileMs = performance.now() - t0;
  gc();
  const memoryAfter = process.memoryUsage();
  const last = engine.compile(`version-${SCENARIOS}`, referenceScenario(SCENARIOS));
  await engine.run(last, inputs[0] as unknown as Record<string, unknown>, { ownerId: OWNER });
  console.log(
    `\n${SCENARIOS} distinct compiled scenarios: compile ${(compileMs / SCENARIOS).toFixed(2)} ms each; RSS +${mb(memoryAfter.rss - memoryBefore.rss)}, ` +
      `host heap +${mb(memoryAfter.heapUsed - memoryBefore.heapUsed)} (RSS now ${mb(memoryAfter.rss)}; programs load into a tenant's sandbox on first run)`,
  );

  await engine.dispose();
  zen.dispose();
}

await main();
