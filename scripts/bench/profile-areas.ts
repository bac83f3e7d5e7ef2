/**
 * Where a process's main thread spent its CPU in a window of a `--cpu-prof` profile, per element and by area of the
 * code (`npx tsx scripts/bench/profile-areas.ts <file.cpuprofile> <from>-<to> [elements] [area]`). The window is in
 * the profile's clock (CLOCK_MONOTONIC, µs), as `npm run bench:http` prints it for its measured batch when
 * BENCH_NODE_ARGS holds --cpu-prof. A sample counts for the area of the nearest frame, from the leaf up, that one of
 * AREAS claims (the driver's socket writes are the driver's, the JSON a record is made of the records'). With an
 * area's name (or its start) as the fourth argument, that area's leaf functions are listed too. Sampled figures
 * include the profiler's own cost: compare them with each other, and take the main thread's CPU from the bench.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface Profile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The areas, tried in this order on each frame from the leaf up. */
const AREAS: Array<[string, (frame: CallFrame) => boolean]> = [
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['records: record texts, pages, masking', (f) => f.url.includes('/src/records/')],
  ['SQL: knex', (f) => /node_modules\/(knex|tarn)\//.test(f.url)],
  ['SQL: mysql2, escaping, socket writes', (f) => /node_modules\/(mysql2|sql-escaper)\//.test(f.url)],
  [
    'SQL: statements built (src/db, run rows)',
    (f) => /\/src\/db\/|finished-run-writes|run-columns|stored-outcome/.test(f.url),
  ],
  ['engine: pool, messages to and from hosts', (f) => /\/src\/engine\/pool\/|node:internal\/child_process/.test(f.url)],
  ['engine: runs (input checks, crossings)', (f) => f.url.includes('/src/engine/')],
  [
    'job store (Agenda, Redis)',
    (f) =>
      /node_modules\/(agenda|@agendajs|ioredis|redis-parser|debug)\/|agenda-internals|execution-queue|redis-job/.test(
        f.url,
      ),
  ],
  ['execution: worker, runner, batch store', (f) => f.url.includes('/src/execution/')],
  ['ids', (f) => f.url.includes('/src/ids/')],
  ['scenarios, models, statistics, metrics', (f) => /\/src\/(scenarios|models|statistics|metrics)\//.test(f.url)],
];
const OTHER = 'other: promises, microtasks, timers, (program)';

const [file, window, elementsArg, listed] = process.argv.slice(2);
if (!file || !window) {
  console.error('usage: profile-areas.ts <file.cpuprofile> <from>-<to> [elements] [area]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const [from, to] = window.split('-').map(Number);
const elements = Number(elementsArg ?? 10_000);
const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

const short = (frame: CallFrame) =>
  `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${frame.columnNumber}`;
const byArea = new Map<string, number>();
const leaves = new Map<string, number>();
let busy = 0;
let time = profile.startTime;
for (let k = 0; k < profile.samples.length; k += 1) {
  time += profile.timeDeltas[k];
  const micros = profile.timeDeltas[k + 1] ?? 0;
  const leaf = profile.samples[k];
  if (time < from || time > to || frames.get(leaf)?.functionName === '(idle)') continue;
  busy += micros;
  let area = OTHER;
  for (let id: number | undefined = leaf; id !== undefined; id = parents.get(id)) {
    const claimed = AREAS.find(([, claims]) => claims(frames.get(id as number) as CallFrame));
    if (claimed) {
      area = claimed[0];
      break;
    }
  }
  byArea.set(area, (byArea.get(area) ?? 0) + micros);
  if (listed && area.startsWith(listed)) {
    const name = short(frames.get(leaf) as CallFrame);
    leaves.set(name, (leaves.get(name) ?? 0) + micros);
  }
}

const perElement = (micros: number) => (micros / elements).toFixed(1).padStart(6);
console.log(
  `${file}: ${(busy / 1000).toFixed(0)} ms busy in ${((to - from) / 1000).toFixed(0)} ms, ${perElement(busy)} µs per element (sampled)`,
);
for (const [area, micros] of [...byArea].sort((a, b) => b[1] - a[1]))
  console.log(`${perElement(micros)} µs ${((100 * micros) / busy).toFixed(0).padStart(3)} %  ${area}`);
for (const [name, micros] of [...leaves].sort((a, b) => b[1] - a[1]).slice(0, 30))
  console.log(`    ${perElement(micros)} µs  ${name}`);
