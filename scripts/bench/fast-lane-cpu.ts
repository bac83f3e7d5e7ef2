/**
 * The fast lane's own CPU per request, without the network, the engine or MySQL (`npx tsx
 * scripts/bench/fast-lane-cpu.ts [another checkout]`): the lane is built with a stub handler and user service and
 * a scoring request (JSON body of five fields, the token in the header) is run through it N times per round
 * (BENCH_LANE_REQUESTS, default 20,000), timed with process.cpuUsage. Given the root of another checkout (e.g. a
 * worktree at main, with its node_modules), that checkout's lane is built in the same process and the two are
 * measured in alternating rounds (BENCH_LANE_ROUNDS, default 9): the ratio of the medians is what a change to the
 * request pipeline costs, and holds on a loaded machine where `npm run bench:http` cannot tell (ADR 0014).
 */
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pino from 'pino';

const HERE = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const REQUESTS = Number(process.env.BENCH_LANE_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_LANE_ROUNDS ?? 9);
const user = { id: 1, username: 'bench', isAdmin: false };
const users = { authenticateScoreToken: async () => user };
const body = JSON.stringify({ age: 41, income: 52000, debt: 1200, employed: true, country: 'DE' });
const reply = {
  status: 200,
  body: {
    runId: 'r',
    state: 'SUCCEEDED',
    result: { score: 0.7 },
    error: null,
    name: 'credit',
    scenarioName: 'credit',
    version: '1',
    beginTime: '2026-11-27T00:00:00.000Z',
    endTime: '2026-11-27T00:00:00.001Z',
  },
};

type Lane = (request: unknown, response: unknown) => boolean;

/** The lane of the checkout at `root`, as its src/app.ts builds it (request checks where that checkout has them). */
async function laneOf(root: string): Promise<Lane> {
  const { createFastLane } = await import(`${root}/src/http/fast-lane.ts`);
  const { routes } = await import(`${root}/generated/routes.ts`);
  const { loadSpec } = await import(`${root}/src/http/api-docs.ts`);
  const spec = loadSpec();
  const requestChecks = await import(`${root}/src/http/request-check.ts`).then(
    (module) => module.compileRequestChecks(spec),
    () => undefined,
  );
  const route = routes.find((candidate: { operationId: string }) => candidate.operationId === 'scoreScenario');
  return createFastLane({
    spec,
    operations: [{ route, handle: async () => reply }],
    logger: pino({ level: 'info' }, pino.destination('/dev/null')),
    users,
    bodyLimitBytes: 1 << 20,
    bodyDepthLimit: 64,
    requestChecks,
  });
}

function once(lane: Lane): Promise<void> {
  return new Promise((resolve) => {
    const request = Object.assign(new PassThrough(), {
      url: '/api/scenario/code/remote/score?name=credit',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), 'score-token': 't' },
    });
    const response = { writeHead() {}, end: () => resolve() };
    if (!lane(request, response)) throw new Error('the lane did not take the request');
    request.end(body);
  });
}

async function cpuPerRequest(lane: Lane): Promise<number> {
  for (let index = 0; index < 2_000; index++) await once(lane);
  const before = process.cpuUsage();
  for (let index = 0; index < REQUESTS; index++) await once(lane);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / REQUESTS;
}

const base = process.argv[2];
const lanes: Array<[string, Lane]> = [['this checkout', await laneOf(HERE)]];
if (base) lanes.push([base, await laneOf(base.replace(/\/$/, ''))]);
const figures = new Map<string, number[]>(lanes.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? lanes : [...lanes].reverse();
  for (const [name, lane] of order) figures.get(name)?.push(await cpuPerRequest(lane));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [name, values] of figures)
  console.log(
    `${name}: ${median(values).toFixed(1)} µs CPU per request (median of ${ROUNDS} rounds: ${values.map((value) => value.toFixed(1)).join(' ')})`,
  );
if (base) {
  const [mine, theirs] = [...figures.values()].map(median);
  console.log(`this checkout / ${base}: ${((100 * mine) / theirs).toFixed(1)} %`);
}
