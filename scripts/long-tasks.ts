/**
 * `npx tsx scripts/long-tasks.ts <file.cpuprofile> [minMs=100] [top=40]`: the long tasks of a CPU profile (node
 * --cpu-prof; `FUZZ_SERVICE_CPU_PROF=<dir> npm run fuzz` writes the fuzz service's), i.e. runs of samples with no
 * idle sample between them, longest first, each with its share of garbage collection, a cause (a lazy compile of an
 * Ajv validator, garbage collection, or the frames of this project that dominate it) and the frames that dominate it. The profiler's own overhead stretches every task (about 1.5×).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

const [file, minText = '100', topText = '40'] = process.argv.slice(2);
if (!file) {
  console.error('usage: npx tsx scripts/long-tasks.ts <file.cpuprofile> [minMs] [top]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const label = (node: ProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*\/(node_modules\/)?/, '')}:${node.callFrame.lineNumber + 1}`;
const stackOf = (id: number) => {
  const frames: ProfileNode[] = [];
  for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current))
    frames.push(byId.get(current) as ProfileNode);
  return frames;
};

interface Task {
  startMs: number;
  ms: number;
  samples: number[];
}
const tasks: Task[] = [];
let time = profile.startTime;
let current: Task | undefined;
for (let index = 0; index < profile.samples.length; index += 1) {
  time += profile.timeDeltas[index];
  const node = byId.get(profile.samples[index]) as ProfileNode;
  if (node.callFrame.functionName === '(idle)') {
    if (current) tasks.push(current);
    current = undefined;
    continue;
  }
  current ??= { startMs: (time - profile.startTime) / 1000, ms: 0, samples: [] };
  current.ms += (profile.timeDeltas[index + 1] ?? 0) / 1000;
  current.samples.push(profile.samples[index]);
}
if (current) tasks.push(current);

function causeOf(task: Task): { cause: string; gc: number; top: string } {
  const inclusive = new Map<string, number>();
  let gc = 0;
  let requestCompile = 0;
  let responseCompile = 0;
  for (const id of task.samples) {
    const frames = stackOf(id);
    if (frames[0].callFrame.functionName === '(garbage collector)') gc += 1;
    const urls = frames.map((frame) => frame.callFrame.url);
    const compiling = frames.some((frame) =>
      /compileSchema|_compileSchemaEnv|_addSchema/.test(frame.callFrame.functionName),
    );
    if (compiling && urls.some((url) => url.includes('openapi.response.validator'))) responseCompile += 1;
    else if (compiling && urls.some((url) => url.includes('openapi.request.validator'))) requestCompile += 1;
    for (const frame of new Set(
      frames
        .filter((f) => /\/(src|scripts|test)\//.test(f.callFrame.url) && !f.callFrame.url.includes('node_modules'))
        .map(label),
    )) {
      inclusive.set(frame, (inclusive.get(frame) ?? 0) + 1);
    }
  }
  const n = task.samples.length;
  const top = [...inclusive.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([frame, count]) => `${Math.round((100 * count) / n)}% ${frame}`)
    .join(' | ');
  const cause =
    responseCompile / n > 0.4
      ? 'response validator compile'
      : requestCompile / n > 0.4
        ? 'request validator compile'
        : gc / n > 0.5
          ? 'garbage collection'
          : 'other';
  return { cause, gc: gc / n, top };
}

const long = tasks.filter((task) => task.ms >= Number(minText)).sort((a, b) => b.ms - a.ms);
const byCause = new Map<string, { count: number; longest: number }>();
for (const task of long) {
  const { cause } = causeOf(task);
  const seen = byCause.get(cause) ?? { count: 0, longest: 0 };
  byCause.set(cause, { count: seen.count + 1, longest: Math.max(seen.longest, task.ms) });
}
console.log(`${long.length} tasks of ${minText} ms or more (profile time, profiler overhead included)`);
for (const [cause, { count, longest }] of byCause)
  console.log(`  ${cause.padEnd(28)} ${String(count).padStart(4)} tasks, longest ${longest.toFixed(1)} ms`);
console.log('');
for (const task of long.slice(0, Number(topText))) {
  const { cause, gc, top } = causeOf(task);
  console.log(
    `${task.ms.toFixed(1).padStart(8)} ms at +${(task.startMs / 1000).toFixed(2)} s  gc ${Math.round(gc * 100)}%  ${cause}  ${top}`,
  );
}
