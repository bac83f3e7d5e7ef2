/**
 * The design measurement behind the engine pool (`npm run bench:crossing`): three ways to run sandboxed code
 * from the API process, on the same small function (JSON in, JSON out), compared on what the engine needs.
 *   A. applySync on the caller's thread (the engine before the pool): the event loop is blocked while code runs;
 *   B. isolated-vm's asynchronous apply: the code runs on isolated-vm's threads, the caller awaits;
 *   C. a worker thread owning the isolate, one postMessage each way per batch, applySync inside the worker.
 * For each: round trip awaited one at a time (p50/p99), throughput with batches of 1, 16 and 64 calls per
 * crossing, and the caller's longest event-loop stall while the sandbox runs a 300 ms loop and while it hits its
 * memory limit. BENCH_SECONDS (default 1) per measurement.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type IsolatedVm from 'isolated-vm';

const ivm = createRequire(import.meta.url)('isolated-vm') as typeof IsolatedVm;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);

const FUNCTION = `(function (json) {
  const items = JSON.parse(json);
  if (items[0] && items[0].spin) { const end = Date.now() + items[0].spin; while (Date.now() < end) {} }
  if (items[0] && items[0].hog) { const keep = []; while (true) keep.push(new Array(1e5).fill(1)); }
  return JSON.stringify(items.map((x) => ({ score: x.a * 2 + 1, band: x.a > 10 ? 'high' : 'low' })));
})`;

type Call = (json: string) => Promise<string>;
interface Design {
  name: string;
  call: Call;
  close(): Promise<void>;
}

function sameThread(): Design {
  const isolate = new ivm.Isolate({ memoryLimit: 64 });
  const fn = isolate.createContextSync().evalSync(FUNCTION, { reference: true }) as IsolatedVm.Reference<
    (json: string) => string
  >;
  return {
    name: 'A. applySync on the caller',
    call: async (json) => fn.applySync(undefined, [json], { timeout: 2000 }) as string,
    close: async () => {
      if (!isolate.isDisposed) isolate.dispose();
    },
  };
}

function asyncApply(): Design {
  let isolate = new ivm.Isolate({ memoryLimit: 64 });
  let fn = isolate.createContextSync().evalSync(FUNCTION, { reference: true }) as IsolatedVm.Reference<
    (json: string) => string
  >;
  return {
    name: "B. isolated-vm's async apply",
    call: async (json) => {
      if (isolate.isDisposed) {
        isolate = new ivm.Isolate({ memoryLimit: 64 });
        fn = isolate.createContextSync().evalSync(FUNCTION, { reference: true }) as IsolatedVm.Reference<
          (json: string) => string
        >;
      }
      return (await fn.apply(undefined, [json], { timeout: 2000 })) as string;
    },
    close: async () => {
      if (!isolate.isDisposed) isolate.dispose();
    },
  };
}

function workerThread(): Design {
  const source = `
    const { parentPort } = require('node:worker_threads');
    const ivm = require(${JSON.stringify(createRequire(import.meta.url).resolve('isolated-vm'))});
    let isolate, fn;
    const ensure = () => {
      if (isolate && !isolate.isDisposed) return;
      isolate = new ivm.Isolate({ memoryLimit: 64 });
      fn = isolate.createContextSync().evalSync(${JSON.stringify(FUNCTION)}, { reference: true });
    };
    parentPort.on('message', (json) => {
      ensure();
      try { parentPort.postMessage({ ok: fn.applySync(undefined, [json], { timeout: 2000 }) }); }
      catch (error) { parentPort.postMessage({ error: String(error.message) }); }
    });`;
  const worker = new Worker(source, { eval: true });
  const waiting: ((answer: { ok?: string; error?: string }) => void)[] = [];
  worker.on('message', (answer) => waiting.shift()!(answer));
  return {
    name: 'C. worker thread + postMessage',
    call: (json) =>
      new Promise((resolve, reject) => {
        waiting.push((answer) => (answer.error !== undefined ? reject(new Error(answer.error)) : resolve(answer.ok!)));
        worker.postMessage(json);
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];
const batchOf = (size: number, offset: number) =>
  JSON.stringify(Array.from({ length: size }, (_, k) => ({ a: (offset + k) % 20 })));

/** The longest gap between 1 ms timer ticks on the caller while `work` runs. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  last = performance.now();
  const started = performance.now();
  await work().catch(() => undefined);
  const took = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(timer);
  return Math.max(longest, took < 2 ? 0 : longest);
}

async function measure(design: Design): Promise<void> {
  for (let k = 0; k < 2000; k++) await design.call(batchOf(1, k));
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  for (let k = 0; performance.now() < end; k++) {
    const t0 = performance.now();
    await design.call(batchOf(1, k));
    latencies.push(performance.now() - t0);
  }
  const rates: string[] = [];
  for (const size of [1, 16, 64]) {
    const texts = Array.from({ length: 100 }, (_, k) => batchOf(size, k));
    let calls = 0;
    const started = performance.now();
    const stop = started + SECONDS * 1000;
    // 4 crossings in flight, as a pool keeps its workers busy
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (performance.now() < stop) await design.call(texts[calls++ % 100]);
      }),
    );
    rates.push(
      `batch ${size}: ${Math.round((calls * size) / ((performance.now() - started) / 1000)).toLocaleString('en-US')}/s`,
    );
  }
  const loopStall = await longestStall(() => design.call(JSON.stringify([{ spin: 300, a: 1 }])));
  const memoryStall = await longestStall(() => design.call(JSON.stringify([{ hog: true, a: 1 }])));
  console.log(
    `${design.name.padEnd(32)} one at a time p50 ${(percentile(latencies, 50) * 1000).toFixed(1)} µs, p99 ${(percentile(latencies, 99) * 1000).toFixed(1)} µs; ${rates.join(', ')}; ` +
      `caller's longest stall: ${loopStall.toFixed(0)} ms during a 300 ms loop, ${memoryStall.toFixed(0)} ms during a memory-limit failure`,
  );
}

for (const make of [sameThread, asyncApply, workerThread]) {
  const design = make();
  try {
    await measure(design);
  } finally {
    await design.close();
  }
}
