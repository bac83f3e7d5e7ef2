/**
 * The long fuzz run (`npm run fuzz -- --requests 10000`): the same spec-driven requests as
 * test/http/fuzz.test.ts, against the real app on a fresh database of its own, with a status
 * histogram per operation and overall, and every finding grouped with one request that shows it.
 * Exits 1 on any 5xx or any other finding (non-JSON error, error body or answer the spec does not declare).
 * It also prints, per operation, the longest the service's event loop was held while one of its requests was being
 * answered, the longest holds of the whole run (requests, jobs, timers) with what was in flight, and the requests
 * that saw the longest: the goal is under 100 ms. The service runs in a child process of its own
 * (test/support/fuzz/fuzz-service-process.ts) and measures its own loop (test/support/loop-probe.ts: how late a
 * 10 ms timer fires, and how much of that its main thread was on a core, from schedstat), so the fuzzer's generation
 * of requests (up to ~900 ms per chunk) is never charged to it, and a machine busy with other work is told apart
 * from the service's own work. "Cold" requests (the first of each operation and status, when whatever initialises
 * lazily does) are printed apart. With --concurrency above 1 a hold is charged to every request in flight,
 * so the per-operation figures are an upper bound (exact with --concurrency 1).
 * FUZZ_SERVICE_CPU_PROF=<dir> writes the service's CPU profile there (node --cpu-prof), to see what held the loop.
 *
 * Options: --requests N (10000)  --seed S (random)  --concurrency C (4)  --operation <operationId>
 *          --from K (start at request K of the seed's sequence: replay one with --from K --requests 1)
 *          --examples N (requests shown per finding group, 1)  --echo-errors (also print the app's error log)
 *          --codes (also the error codes per operation: how far requests get)
 * Environment: DATABASE_URL (default mysql://root@127.0.0.1:3306/scoring_fuzz; dropped and recreated,
 * so its name must contain "fuzz" or "test"), JOBS_URL (default redis://127.0.0.1:6379/1, under a key prefix of its own).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../src/db/database.js';
import { describeRequest, type FuzzRequest } from '../test/support/fuzz/fuzz-requests.js';
import { startFuzzSessionInChild } from '../test/support/fuzz/fuzz-session.js';
import type { Finding } from '../test/support/fuzz/response-check.js';
import type { LoopHold } from '../test/support/fuzz/fuzz-service.js';

const { values: options } = parseArgs({
  options: {
    requests: { type: 'string', default: '10000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    operation: { type: 'string' },
    from: { type: 'string', default: '0' },
    examples: { type: 'string', default: '1' },
    'echo-errors': { type: 'boolean', default: false },
    codes: { type: 'boolean', default: false },
  },
});
const total = Number(options.requests);
const seed = options.seed === undefined ? (Date.now() ^ (Math.random() * 0x100000000)) | 0 : Number(options.seed);
const concurrency = Math.max(1, Number(options.concurrency));
const from = Number(options.from);
const examplesShown = Number(options.examples);
const CHUNK = 200;

process.env.APP_ENV = 'test';
process.env.DATABASE_URL ??= 'mysql://root@127.0.0.1:3306/scoring_fuzz';

async function freshDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/fuzz|test/.test(name))
    throw new Error(
      `the fuzz run drops its database first; ${name} does not look like a scratch database (its name must contain "fuzz" or "test")`,
    );
  const server = new URL(url);
  server.pathname = '/';
  const admin = createDatabase(server.toString(), { min: 0, max: 1 });
  await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
  await admin.destroy();
  await ensureDatabaseExists(url);
  const db = createDatabase(url, { min: 0, max: 1 });
  await migrateToLatest(db);
  await db.destroy();
}

interface Observation {
  index: number;
  request: FuzzRequest;
  status: number;
  code?: string;
  requestId?: string;
  durationMs: number;
  blockMs: number;
  busyMs: number;
  findings: Finding[];
}

/** The goal for the longest event-loop hold while any one request is answered. */
const BLOCK_GOAL_MS = 100;

function errorCodeOf(body: Buffer): string | undefined {
  try {
    return (JSON.parse(body.toString('utf8')) as { code?: string }).code;
  } catch {
    return undefined;
  }
}

/** Findings of one kind and cause group together, whatever ids and numbers they mention. */
function groupKey(observation: Observation, finding: Finding): string {
  const what = (finding.cause ?? finding.message)
    .split('\n')[0]
    .replace(/"requestId":"[^"]*"/g, '')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d+/g, 'N')
    .slice(0, 200);
  return `${finding.kind} · ${observation.request.operationId} · ${observation.status} · ${what}`;
}

function printHistogram(title: string, byStatus: Map<number, number>): void {
  const cells = [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status === 0 ? 'none' : status}×${count}`);
  const sum = [...byStatus.values()].reduce((a, b) => a + b, 0);
  console.log(`${title.padEnd(32)} ${String(sum).padStart(6)}  ${cells.join('  ')}`);
}

async function main(): Promise<void> {
  await freshDatabase(process.env.DATABASE_URL as string);
  const session = await startFuzzSessionInChild({ echoErrors: options['echo-errors'] });
  const arbitrary = options.operation ? session.generator.requestsTo(options.operation) : session.generator.requests();
  let chunkIndex = -1;
  let chunk: FuzzRequest[] = [];
  /** The longest the fuzzer took generating a chunk of requests (in this process: the service's loop never waits for it). */
  let longestGenerationMs = 0;
  /** Request `index` of this seed's sequence: chunks of CHUNK, each sampled with a seed mixed from the run's seed and the chunk number (so nearby seeds share no chunks). */
  const requestAt = (index: number): FuzzRequest => {
    const wanted = Math.floor(index / CHUNK);
    if (wanted !== chunkIndex) {
      const generationStarted = performance.now();
      chunk = fc.sample(arbitrary, { seed: (seed ^ Math.imul(wanted + 1, 0x9e3779b1)) | 0, numRuns: CHUNK });
      longestGenerationMs = Math.max(longestGenerationMs, performance.now() - generationStarted);
      chunkIndex = wanted;
    }
    return chunk[index % CHUNK];
  };

  console.log(
    `fuzzing ${session.baseUrl} with ${total} requests, seed ${seed}${options.operation ? `, only ${options.operation}` : ''}, ${concurrency} at a time`,
  );
  const observations: Observation[] = [];
  let next = from;
  const end = from + total;
  const started = Date.now();
  const worker = async () => {
    while (next < end) {
      const index = next++;
      const request = requestAt(index);
      const { response, findings } = await session.run(request);
      const code = response.status >= 400 ? errorCodeOf(response.body) : undefined;
      const requestId =
        typeof response.headers['x-request-id'] === 'string' ? response.headers['x-request-id'] : undefined;
      observations.push({
        index,
        request,
        status: response.error ? 0 : response.status,
        code,
        requestId,
        durationMs: response.durationMs,
        blockMs: 0,
        busyMs: 0,
        findings,
      });
      if (observations.length % 1000 === 0)
        console.error(
          `… ${observations.length} requests, ${observations.filter((o) => o.findings.length > 0).length} with findings, ${Math.round((Date.now() - started) / 1000)} s`,
        );
    }
  };
  let eventLoop: Awaited<ReturnType<typeof session.eventLoop>>;
  let backgroundErrors: string[];
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
    eventLoop = await session.eventLoop();
    backgroundErrors = await session.backgroundErrors();
  } finally {
    await session.close();
  }
  // A request the service's HTTP parser refused (431, 400 before routing) never reached its request listener: 0.
  for (const observation of observations) {
    const hold = observation.requestId ? eventLoop.holdsByRequestId.get(observation.requestId) : undefined;
    observation.blockMs = hold?.wallMs ?? 0;
    observation.busyMs = hold?.busyMs ?? 0;
  }

  console.log('\nstatus histogram per operation');
  const byOperation = new Map<string, Map<number, number>>();
  const overall = new Map<number, number>();
  for (const { request, status } of observations) {
    const histogram = byOperation.get(request.operationId) ?? new Map<number, number>();
    histogram.set(status, (histogram.get(status) ?? 0) + 1);
    byOperation.set(request.operationId, histogram);
    overall.set(status, (overall.get(status) ?? 0) + 1);
  }
  for (const [operationId, histogram] of [...byOperation.entries()].sort(([a], [b]) => a.localeCompare(b)))
    printHistogram(operationId, histogram);
  printHistogram('overall', overall);

  if (options.codes) {
    console.log('\nerror codes per operation');
    const codes = new Map<string, Map<string, number>>();
    for (const { request, status, code } of observations) {
      if (status < 400) continue;
      const counts = codes.get(request.operationId) ?? new Map<string, number>();
      const key = `${status} ${code ?? '?'}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      codes.set(request.operationId, counts);
    }
    for (const [operationId, counts] of [...codes.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      console.log(
        `${operationId.padEnd(32)} ${[...counts.entries()]
          .sort(([, a], [, b]) => b - a)
          .map(([key, count]) => `${key}×${count}`)
          .join('  ')}`,
      );
    }
  }

  // Two figures per hold: wall time (how late the loop answered) and the loop's own work in it (its thread's time on
  // a core). On a machine whose cores are busy with other work the OS stretches the first; the second is the
  // service's code. The goal is judged on the loop's own work; both are printed.
  // "Cold" requests: the first of each operation and status in the run. Request and response checks are compiled
  // before the service listens (ADR 0010, 0014); what still initialises lazily (an error path, a parser) shows in
  // those holds, printed apart from the rest.
  const seenStatus = new Set<string>();
  const cold = new Set<Observation>();
  for (const observation of [...observations].sort((a, b) => a.index - b.index)) {
    const key = `${observation.request.operationId} ${observation.status}`;
    if (!seenStatus.has(key)) cold.add(observation);
    seenStatus.add(key);
  }
  const longestOf = (values: number[]) => (values.length === 0 ? 0 : Math.max(...values));
  const p99Of = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
  };
  const line = (label: string, seen: Observation[]) => {
    const warm = seen.filter((o) => !cold.has(o));
    const coldOnes = seen.filter((o) => cold.has(o));
    const longestWarm = longestOf(warm.map((o) => o.busyMs));
    return `${label.padEnd(32)} own work: warm longest ${longestWarm.toFixed(1).padStart(6)} p99 ${p99Of(
      warm.map((o) => o.busyMs),
    )
      .toFixed(1)
      .padStart(6)}, cold longest ${longestOf(coldOnes.map((o) => o.busyMs))
      .toFixed(1)
      .padStart(6)}   wall: warm longest ${longestOf(warm.map((o) => o.blockMs))
      .toFixed(1)
      .padStart(7)}${longestWarm >= BLOCK_GOAL_MS ? '  ← over the goal' : ''}`;
  };
  // Two figures per hold: wall time (how late the loop answered) and the loop's own work in it (its thread's time on
  // a core). On a machine whose cores are busy with other work the OS stretches the first; the second is the
  // service's code. The goal is judged on the loop's own work; both are printed.
  console.log(
    `\nlongest hold of the service's event loop per operation while one of its requests was answered (ms; goal < ${BLOCK_GOAL_MS} of the loop's own work on warm requests; cold: the first request of each operation and status, when validators compile${concurrency > 1 ? `; upper bound: holds are charged to all ${concurrency} requests in flight` : ''})`,
  );
  const perOperation = new Map<string, Observation[]>();
  for (const observation of observations)
    perOperation.set(observation.request.operationId, [
      ...(perOperation.get(observation.request.operationId) ?? []),
      observation,
    ]);
  for (const [operationId, seen] of [...perOperation.entries()].sort(([a], [b]) => a.localeCompare(b)))
    console.log(line(operationId, seen));
  const warmLongest = longestOf(observations.filter((o) => !cold.has(o)).map((o) => o.busyMs));
  const coldLongest = longestOf([...cold].map((o) => o.busyMs));
  const { byWall, byBusy } = eventLoop.longestHolds;
  const describeHold = (hold: LoopHold) =>
    `  own work ${(hold.busyMs ?? NaN).toFixed(1).padStart(6)} ms, wall ${hold.wallMs.toFixed(1).padStart(7)} ms (waiting for a core ${(hold.waitMs ?? NaN).toFixed(1)} ms) at ${new Date(hold.at).toISOString().slice(11, 23)}, in flight: ${hold.inFlight.join(' | ').slice(0, 240) || 'no request (a job or timer)'}`;
  const longestBusy = byBusy[0]?.busyMs ?? 0;
  console.log(
    `\nlongest holds of the service's event loop over the whole run (requests, jobs, timers): own work ${longestBusy.toFixed(1)} ms, wall ${(byWall[0]?.wallMs ?? 0).toFixed(1)} ms${longestBusy >= BLOCK_GOAL_MS ? '  ← over the goal' : ''}`,
  );
  console.log("by the loop's own work:");
  for (const hold of byBusy.slice(0, 5)) console.log(describeHold(hold));
  console.log('by wall time:');
  for (const hold of byWall.slice(0, 5)) console.log(describeHold(hold));
  console.log(
    `(the fuzzer generated its requests in its own process, at most ${longestGenerationMs.toFixed(1)} ms per chunk of ${CHUNK}: not charged to the service)`,
  );
  console.log(
    `load average now ${loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')} (1, 5, 15 min) on this machine's cores: wall times stretch with it`,
  );
  console.log("longest holds by request (the loop's own work)");
  for (const observation of [...observations].sort((a, b) => b.busyMs - a.busyMs).slice(0, 8)) {
    const { index, request, status, blockMs, busyMs } = observation;
    console.log(
      `  ${busyMs.toFixed(1)} ms (wall ${blockMs.toFixed(1)} ms)${cold.has(observation) ? ' cold' : ''}  #${index} ${request.operationId} → ${status === 0 ? 'no response' : status} [${request.variants.join(', ') || 'well-formed'}]  (npm run fuzz -- --seed ${seed} --from ${index} --requests 1 --concurrency 1${options.operation ? ` --operation ${options.operation}` : ''})`,
    );
  }

  console.log('\nslowest requests');
  for (const { index, request, status, durationMs } of [...observations]
    .sort((a, b) => b.durationMs - a.durationMs)
    .slice(0, 5)) {
    console.log(
      `  ${durationMs} ms  #${index} ${request.operationId} → ${status === 0 ? 'no response' : status} [${request.variants.join(', ') || 'well-formed'}]`,
    );
  }
  if (backgroundErrors.length > 0) {
    console.log(`\n${backgroundErrors.length} errors logged outside requests (jobs), first: ${backgroundErrors[0]}`);
  }

  const groups = new Map<string, Array<{ observation: Observation; finding: Finding }>>();
  for (const observation of observations) {
    for (const finding of observation.findings) {
      const key = groupKey(observation, finding);
      groups.set(key, [...(groups.get(key) ?? []), { observation, finding }]);
    }
  }
  const fiveXx = observations.filter(({ status }) => status >= 500).length;
  console.log(
    `\nevent loop (goal < ${BLOCK_GOAL_MS} ms of its own work): requests warm ${warmLongest.toFixed(1)} ms, cold ${coldLongest.toFixed(1)} ms; whole run ${longestBusy.toFixed(1)} ms (wall ${(byWall[0]?.wallMs ?? 0).toFixed(1)} ms)`,
  );
  console.log(
    `\n${observations.length} requests in ${Math.round((Date.now() - started) / 1000)} s (seed ${seed}): ${fiveXx} × 5xx, ${observations.filter((o) => o.findings.length > 0).length} with findings in ${groups.size} groups`,
  );
  for (const [key, group] of [...groups.entries()].sort(([, a], [, b]) => b.length - a.length)) {
    console.log(`\n${group.length} × ${key}`);
    for (const {
      observation: { index, request },
      finding,
    } of group.slice(0, examplesShown)) {
      console.log(`  ${finding.message.split('\n')[0].slice(0, 300)}`);
      if (finding.cause) console.log(`  cause: ${finding.cause.replace(/\n/g, '\n    ')}`);
      console.log(
        `  replay: npm run fuzz -- --seed ${seed} --from ${index} --requests 1${options.operation ? ` --operation ${options.operation}` : ''}`,
      );
      console.log(describeRequest(request, session.baseUrl).replace(/^/gm, '  '));
    }
  }
  process.exitCode = groups.size > 0 ? 1 : 0;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    console.error(`fuzz run failed: ${(error as Error).stack ?? String(error)}`);
    process.exit(2);
  },
);
