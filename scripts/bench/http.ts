/**
 * Execution benchmarks over HTTP (`npm run bench:http`). Starts its own processes on a dedicated
 * database (`scoring_bench`) and job-store prefix, seeds a user and the reference credit scenario,
 * measures, prints each goal with its figure and whether it is met, and cleans up:
 *   1. sync scoring with autocannon (64 connections, BENCH_SYNC_SECONDS, default 10) against a bare
 *      Express 5 endpoint returning a constant JSON (the ceiling), one process each, in BENCH_CEILING_ROUNDS
 *      (default 3) interleaved rounds (the goals: the medians of the rounds' ratios); and with
 *      decision recording off and on: two scenarios of the same document, one recording every run (the
 *      default), one with recording off, loaded in turn for BENCH_RECORDING_SECONDS each (default 2),
 *      BENCH_RECORDING_PAIRS pairs (default 40) in the order off-on, on-off, … (the goal: the median of
 *      the pairs' ratios), with the API's and MariaDB's CPU per answered request (the API's main thread,
 *      its event loop, on its own, and the load generator's), and the records stored counted against the
 *      runs answered. BENCH_RECORDING_NULL=1 leaves both scenarios unrecorded (an A/A run: how far this
 *      machine's noise alone moves the median from 100 %); then
 *      the same with METRICS_ENABLED=true against METRICS_ENABLED=false (two API processes, measured
 *      interleaved, BENCH_METRICS_ROUNDS each, default 3; the ratio of the medians), a scrape of the
 *      metrics, and the in-process cost per run of the run listeners (Prometheus metrics, run
 *      statistics). BENCH_ONLY=sync stops here;
 *   2. a batch of BENCH_BATCH_ELEMENTS (default 10,000), submit to last result, every element recorded (and
 *      once more with recording off, for information);
 *   3. the results of a batch of BENCH_RESULTS_ELEMENTS (default 20,000) streamed with getBatchResults
 *      (NDJSON; CSV as well, for information);
 *   4. async submit-to-result latency when idle (information);
 *   5. sustained async load at 30 % of the ceiling's rate (BENCH_ASYNC_RATE overrides) for
 *      BENCH_ASYNC_SECONDS (default 60): an open loop of submissions; every 10th run is polled every
 *      10 ms (client-observed submit-to-result latency), every run's stored result is checked in the
 *      database (submit to finished_at); job-store keys counted before and after.
 * Processes: one API process (RUN_WORKER=false) and BENCH_WORKERS worker processes (default 1,
 * `src/worker.ts`). The machine must be otherwise idle for the figures to mean anything.
 * BENCH_ONLY (comma-separated: sync, batch, results, async, shadow; default all but shadow) runs some parts
 * only, for profiling one of them; `shadow` (never run by default) measures sync scoring with one shadow at 100 %
 * sampling against the same scenario without one, BENCH_SHADOW_PAIRS pairs (default 10) of
 * BENCH_SHADOW_SECONDS (default 3) alternating (docs/live-tests.md); with SHADOW_ENGINE_SHARE=0 in the
 * environment (handed to the API process) every shadow run is skipped: the budget-exhausted figure; BENCH_SHADOW_SIDE=with
 * (or without) loads that side alone, its pairs' worth of time, and prints its CPU per answer (for a profile of one side); the goals of the parts left out are not printed. BENCH_NODE_ARGS (space-separated,
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) is passed to the API and worker processes. BENCH_PHASES=1
 * runs them at LOG_LEVEL=debug and prints where the measured batch's time went (their 'batch submitted'
 * and 'batch chunk done' lines). BENCH_MODEL=onnx measures, in place of the reference credit scenario, a scenario
 * whose MODEL node scores the ONNX model of 100 gradient-boosted trees (test/models/fixtures/onnx/gbm-100.onnx,
 * stored in the bench user's registry as an upload would store it): START → SCRIPT (the four features from the
 * credit inputs) → MODEL → END (issue 31: a batch of 10,000, every element recorded, ≥ 10,000 elements/s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { Knex } from 'knex';
import { Redis } from 'ioredis';
import { UserService } from '../../src/auth/user-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';
import { PrometheusMetrics } from '../../src/metrics/prometheus-metrics.js';
import { normalizeScenarioDocument, onnxDocument, type ScenarioDocument } from '../../src/engine/index.js';
import { ChildProcessOnnxInspector } from '../../src/models/onnx-inspector.js';
import type { DeployedScenario } from '../../src/scenarios/deployed-scenarios.js';
import { RunStatisticsRecorder } from '../../src/statistics/run-statistics-recorder.js';
import { StatisticsStore } from '../../src/statistics/statistics-store.js';
import { childPids, databaseServerPids, processCpuMs, threadCpuMs, totalCpuMs } from './proc-cpu.js';
import { referenceScenario, sampleInputs } from './reference-scenario.js';
import { contentHash } from '../../src/scenarios/version-content.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_bench';
const JOBS_URL = process.env.BENCH_JOBS_URL ?? 'redis://127.0.0.1:6379/2';
const PREFIX = `scoring:bench:${randomUUID().slice(0, 8)}:`;
const API_PORT = Number(process.env.BENCH_API_PORT ?? 18080);
const BARE_PORT = API_PORT + 1;
const METRICS_API_PORT = API_PORT + 2;
const METRICS_PORT = API_PORT + 3;
const ONLY_SYNC = process.env.BENCH_ONLY === 'sync';
const ONLY_SHADOW = process.env.BENCH_ONLY === 'shadow';
const SHADOW_PAIRS = Number(process.env.BENCH_SHADOW_PAIRS ?? 10);
const SHADOW_SECONDS = Number(process.env.BENCH_SHADOW_SECONDS ?? 3);
const SHADOW_SIDE = (['with', 'without'] as const).find((side) => side === process.env.BENCH_SHADOW_SIDE);
/** Runs of sync scoring with metrics on, and as many with them off, for the ratio. */
const METRICS_ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? 3);
const SYNC_SECONDS = Number(process.env.BENCH_SYNC_SECONDS ?? 10);
const CEILING_ROUNDS = Number(process.env.BENCH_CEILING_ROUNDS ?? 3);
const ASYNC_SECONDS = Number(process.env.BENCH_ASYNC_SECONDS ?? 60);
const ASYNC_SHARE = 0.3;
const BATCH_ELEMENTS = Number(process.env.BENCH_BATCH_ELEMENTS ?? 10_000);
const RESULTS_ELEMENTS = Number(process.env.BENCH_RESULTS_ELEMENTS ?? 20_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
/**
 * Sync runs with decision recording off and on, this many pairs (alternating, so a loaded machine's drift
 * hits both). Many short pairs rather than a few long ones, in about the same time: on these shared machines req/s
 * moves by tens of per cent from one stretch of seconds to the next, so what narrows the median is the
 * number of pairs. In A/A runs (BENCH_RECORDING_NULL=1) the middle half of 40 pairs of 2 s spanned
 * 14 points, of 16 pairs of 3 s 21 points (docs/benchmarks.md).
 */
const RECORDING_PAIRS = Number(process.env.BENCH_RECORDING_PAIRS ?? 40);
const RECORDING_SECONDS = Number(process.env.BENCH_RECORDING_SECONDS ?? 2);
/** A/A: the "recording on" scenario does not record either (the benchmark's own noise). */
const RECORDING_NULL = process.env.BENCH_RECORDING_NULL === '1';
const SCENARIO = 'credit';
/** The same document as SCENARIO, with recording off: the other half of each pair, with no settings cache to wait out between the two. */
const UNRECORDED_SCENARIO = 'credit-unrecorded';
/** The same document again, recording off, with one shadow (the same document) at 100 % sampling: BENCH_ONLY=shadow. */
const SHADOWED_SCENARIO = 'credit-shadowed';
/** Every this many async submissions, one is polled closely for its client-observed latency. */
const SAMPLE_EVERY = 10;
const PHASES = process.env.BENCH_PHASES === '1';
/** The debug lines of the batch path (BENCH_PHASES=1), as the service processes log them. */
const phaseLines: Array<Record<string, unknown>> = [];
const PARTS = new Set((process.env.BENCH_ONLY ?? 'sync,batch,results,async').split(',').map((part) => part.trim()));
const ONNX_MODEL = process.env.BENCH_MODEL === 'onnx';

/**
 * BENCH_MODEL=onnx: the 100-tree ONNX model stored for the owner (as an upload stores it: the file, and the document
 * read by the inspector), and the scenario scoring it from the credit inputs.
 */
async function onnxScenario(db: Knex, ownerId: number): Promise<ScenarioDocument> {
  const path = fileURLToPath(new URL('../../test/models/fixtures/onnx/gbm-100.onnx', import.meta.url));
  const bytes = readFileSync(path);
  const answer = await new ChildProcessOnnxInspector(20_000).inspect(path);
  if (!('ok' in answer)) throw new Error(answer.refused.message);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const document = onnxDocument(answer.ok, sha256);
  const [modelId] = await db('models').insert({ owner_id: ownerId, name: 'gbm', next_version: 2 });
  await db('model_versions').insert({
    model_id: modelId,
    version_number: 1,
    format: 'ONNX',
    model_type: 'ONNX',
    function_name: document.functionName,
    file_name: 'gbm-100.onnx',
    size_bytes: bytes.length,
    sha256,
    file: bytes,
    document: JSON.stringify(document),
  });
  // every field of the credit inputs (the batch sends them all), four of them used
  const numeric = [
    'age',
    'income',
    'debt',
    'employmentYears',
    'creditHistoryYears',
    'latePayments',
    'loanAmount',
    'loanTermMonths',
    'dependents',
  ];
  const inputs = [
    ...numeric.map((name) => [name, 'DOUBLE']),
    ['housing', 'STRING'],
    ['region', 'STRING'],
    ['hasCollateral', 'BOOLEAN'],
  ].map(([name, type]) => ({ name, type: { type }, required: false }));
  const nodes = [
    { id: 'start', type: 'START' },
    { id: 'features', type: 'SCRIPT' },
    { id: 'gbm', type: 'MODEL' },
    { id: 'end', type: 'END' },
  ];
  return normalizeScenarioDocument({
    content: { nodes, edges: nodes.slice(1).map((n, k) => ({ from: nodes[k].id, to: n.id })) },
    nodeProperties: {
      start: { content: { inputs } },
      features: {
        content: {
          language: 'javascript',
          code: 'X = [age, income * 20, income > 0 ? Math.min(1, debt / income) : 1, employmentYears * 12];',
          outputs: ['X'],
        },
      },
      gbm: { content: { model: 'gbm', version: 1, outputs: { limit: 'limit' } } },
      end: { content: { outputs: ['limit'] } },
    },
  });
}

const children: ChildProcess[] = [];
// However this process ends (an error, a closed stdout pipe), it takes its service processes with it.
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
// Keep-alive connections, at most 256: opening thousands at once overflows the server's accept
// backlog (SYN retries of 1, 3, 7 s, and resets), which measures the TCP stack, not the service.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function startProcess(script: string, env: Record<string, string>): ChildProcess {
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      APP_ENV: 'local',
      LOG_LEVEL: 'warn',
      DATABASE_URL,
      JOBS_URL,
      JOBS_KEY_PREFIX: PREFIX,
      LIMIT_BATCH_ELEMENTS: String(Math.max(BATCH_ELEMENTS, RESULTS_ELEMENTS, 100_000)),
      ...(PHASES ? { LOG_LEVEL: 'debug' } : {}),
      ...env,
    },
    stdio: ['ignore', PHASES ? 'pipe' : 'ignore', 'inherit'],
  });
  if (child.stdout) collectPhaseLines(child.stdout);
  children.push(child);
  return child;
}

function collectPhaseLines(stdout: NodeJS.ReadableStream): void {
  let rest = '';
  stdout.setEncoding('utf8');
  stdout.on('data', (text: string) => {
    const lines = (rest + text).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"batch submitted"') && !line.includes('"batch chunk done"')) continue;
      try {
        phaseLines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
}

/** Where one batch's time went, from the service's debug lines (BENCH_PHASES=1). */
function phaseReport(batchId: string): string {
  const lines = phaseLines.filter((line) => line.batchId === batchId);
  const submit = lines.find((line) => line.msg === 'batch submitted');
  const chunks = lines.filter((line) => line.msg === 'batch chunk done');
  const phase = (name: string) => {
    const values = chunks.map((line) => Number(line[`${name}Ms`] ?? 0));
    return `${name} p50 ${fixed(percentile(values, 50))} ms, max ${fixed(Math.max(...values))} ms, sum ${fixed(
      values.reduce((a, b) => a + b, 0),
      0,
    )} ms`;
  };
  const head = submit
    ? `submit: resolve ${submit.resolveMs} ms, store ${submit.storeMs} ms, enqueue ${submit.enqueueMs} ms`
    : 'submit: no line';
  return `${head}; ${chunks.length} chunk jobs: ${['load', 'run', 'storeWait', 'finish'].map(phase).join('; ')}`;
}

const BARE_SERVER = `
import express from 'express';
const app = express();
const body = ${JSON.stringify({ runId: 'x', scenarioName: SCENARIO, version: '1', state: 'SUCCEEDED', beginTime: null, endTime: null, result: { decision: 'APPROVE', tier: 'A', limitFactor: 1, score: 600, reasonCodes: [] }, error: null })};
app.post('/api/scenario/code/remote/score', (req, res) => res.json(body));
app.listen(${BARE_PORT});
`;

interface Answer {
  status: number;
  text: string;
  headers: http.IncomingHttpHeaders;
}

function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: API_PORT,
        method,
        path,
        agent,
        headers: {
          ...headers,
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

const json = (answer: Answer): any => (answer.text ? JSON.parse(answer.text) : null);

async function waitUntilUp(port: number): Promise<void> {
  // Up to 60 s: on a machine other sessions load (load average 20 on 2 cores), an API took more than 20 s to start.
  for (let i = 0; i < 600; i += 1) {
    const up = await new Promise<boolean>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/health/live' }, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
    });
    if (up) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on ${port}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const fixed = (n: number, digits = 1) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function countKeys(redis: Redis): Promise<number> {
  let cursor = '0';
  let count = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
    cursor = next;
    count += keys.length;
  } while (cursor !== '0');
  return count;
}

interface CannonResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  ok: number;
  /** CPU time (all threads) the process behind `port` spent per answered request, in µs; NaN where /proc is unavailable. */
  cpuMicros: number;
  /** CPU time of the database server per answered request, in µs, the writes that follow the run's last answers included; NaN where /proc is unavailable. */
  dbCpuMicros: number;
  /** CPU time of the API's main thread (its event loop) per answered request, in µs; NaN where /proc is unavailable. */
  mainCpuMicros: number;
  /** CPU time of this process (autocannon, the load) per answered request, in µs. */
  loadCpuMicros: number;
  /** CPU time of the API's child processes (its engine hosts) per answered request, in µs; NaN where /proc is unavailable. */
  hostCpuMicros: number;
}

async function cannon(
  port: number,
  token: string,
  body: string,
  pid?: number,
  { scenario = SCENARIO, seconds = SYNC_SECONDS } = {},
): Promise<CannonResult> {
  const database = databaseServerPids();
  const hosts = childPids(pid);
  const hostsBefore = totalCpuMs(hosts);
  const cpuBefore = processCpuMs(pid);
  const mainBefore = threadCpuMs(pid, pid);
  const loadBefore = process.cpuUsage();
  const dbBefore = totalCpuMs(database);
  // autocannon's own histogram keeps whole milliseconds, so a p99 of 10 ms against 13 ms reads as 1.3× whatever lies
  // between: the percentiles are taken here from every 2xx answer's own time (fractions of a millisecond), as the
  // histogram would with exact values (no coordinated-omission correction: the load is closed-loop).
  const times: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon(
      {
        url: `http://127.0.0.1:${port}/api/scenario/code/remote/score?name=${scenario}`,
        method: 'POST',
        connections: 64,
        duration: seconds,
        headers: { 'content-type': 'application/json', 'score-token': token },
        body,
      },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    );
    run.on('response', (_client, status, _bytes, responseTime) => {
      if (status >= 200 && status < 300) times.push(responseTime);
    });
  });
  const answered = Math.max(result['2xx'], 1);
  const cpuMicros = ((processCpuMs(pid) - cpuBefore) * 1000) / answered;
  const mainCpuMicros = ((threadCpuMs(pid, pid) - mainBefore) * 1000) / answered;
  const hostCpuMicros = hosts.length > 0 ? ((totalCpuMs(hosts) - hostsBefore) * 1000) / answered : NaN;
  const load = process.cpuUsage(loadBefore);
  const loadCpuMicros = (load.user + load.system) / answered;
  // Records are written up to RECORDS_FLUSH_MS (50 ms) after their run: the database's CPU is read a little later.
  await sleep(300);
  const dbCpuMicros = database.length > 0 ? ((totalCpuMs(database) - dbBefore) * 1000) / answered : NaN;
  return {
    rps: result.requests.average,
    p50: times.length > 0 ? percentile(times, 50) : result.latency.p50,
    p99: times.length > 0 ? percentile(times, 99) : result.latency.p99,
    non2xx: result.non2xx,
    ok: result['2xx'],
    cpuMicros,
    dbCpuMicros,
    mainCpuMicros,
    loadCpuMicros,
    hostCpuMicros,
  };
}

function mean(results: CannonResult[]): CannonResult {
  const average = (pick: (result: CannonResult) => number) =>
    results.reduce((sum, result) => sum + pick(result), 0) / results.length;
  return {
    rps: average((r) => r.rps),
    p50: average((r) => r.p50),
    p99: average((r) => r.p99),
    non2xx: average((r) => r.non2xx),
    ok: average((r) => r.ok),
    cpuMicros: average((r) => r.cpuMicros),
    dbCpuMicros: average((r) => r.dbCpuMicros),
    mainCpuMicros: average((r) => r.mainCpuMicros),
    loadCpuMicros: average((r) => r.loadCpuMicros),
    hostCpuMicros: average((r) => r.hostCpuMicros),
  };
}

/** Turns the scenario's recording on (every sync run) or off; set before the API reads them (it caches them 5 s). */
async function setRecording(db: Knex, scenarioId: number, enabled: boolean): Promise<void> {
  await db('recording_settings')
    .insert({ scenario_id: scenarioId, enabled, retention_days: 30, sync_sample_rate: 1, trace: false })
    .onConflict('scenario_id')
    .merge(['enabled']);
}

/** Decision records of runs that began since `since`, once the API has stored them (the count stops growing), against the runs expected. */
async function recordsStored(
  db: Knex,
  scenarioId: number,
  since: Date,
  expected: number,
): Promise<{ stored: number; expected: number }> {
  let stored = -1;
  for (let tries = 0; tries < 20; tries += 1) {
    const counted = Number(
      (
        (await db('decision_record_pages')
          .where('scenario_id', scenarioId)
          .andWhere('first_began_at', '>=', since)
          .sum({ n: 'records' })
          .first()) as { n: number | null }
      ).n ?? 0,
    );
    if (counted === stored && counted >= expected) break;
    stored = counted;
    await sleep(500);
  }
  return { stored, expected };
}

/** CPU time (user + system, all threads) of processes between its creation and report(), from /proc (Linux). */
class CpuMeter {
  private readonly start: Map<string, number>;
  constructor(private readonly groups: Record<string, Array<number | undefined>>) {
    this.start = new Map(Object.entries(groups).map(([name, pids]) => [name, totalCpuMs(pids)]));
  }

  report(): string {
    return Object.entries(this.groups)
      .map(([name, pids]) => `${name} ${fixed(totalCpuMs(pids) - (this.start.get(name) ?? 0), 0)} ms`)
      .join(', ');
  }
}

/** The worker processes' main threads (their event loops), their other threads, their engine hosts and MariaDB, from now on: µs of CPU per element. */
class PerElementCpu {
  private readonly mainBefore: number;
  private readonly hostsBefore: number;
  private readonly processBefore: number;
  private readonly databaseBefore: number;
  constructor(private readonly workers: ChildProcess[]) {
    this.mainBefore = this.mainMs();
    this.hostsBefore = this.hostsMs();
    this.processBefore = this.processMs();
    this.databaseBefore = totalCpuMs(databaseServerPids());
  }

  private processMs(): number {
    return totalCpuMs(this.workers.map((child) => child.pid));
  }

  private mainMs(): number {
    return this.workers.reduce((sum, child) => sum + threadCpuMs(child.pid, child.pid), 0);
  }

  private hostsMs(): number {
    return totalCpuMs(this.workers.flatMap((child) => childPids(child.pid)));
  }

  report(elements: number): string {
    const micros = (ms: number) => fixed((ms * 1000) / elements, 1);
    const main = this.mainMs() - this.mainBefore;
    // The other threads: V8's (garbage collection, compilation) and libuv's.
    const others = this.processMs() - this.processBefore - main;
    const database = totalCpuMs(databaseServerPids()) - this.databaseBefore;
    return `worker main thread ${micros(main)} µs, its other threads ${micros(others)} µs, engine hosts ${micros(this.hostsMs() - this.hostsBefore)} µs, MariaDB ${micros(database)} µs (whole server)`;
  }
}

const ASYNC_WINDOW_SECONDS = 10;
type StoredRun = { request_id: string; created_at: Date; started_at: Date | null; finished_at: Date | null };

/**
 * Where async runs spent their time, p50/p99 of each stage: submit to the row's insert (group commit),
 * row to claimed by a worker (job saved, picked up, claimed), claimed to finished (engine), and, for the
 * runs a client polled, finished to seen by the client (outcome written, next poll).
 */
function asyncStages(rows: StoredRun[], submittedAt: Map<string, number>, observedById: Map<string, number>): string {
  const stage = (name: string, values: number[]) =>
    `${name} p50 ${fixed(percentile(values, 50))} / p99 ${fixed(percentile(values, 99))} ms`;
  const time = (date: Date | null) => (date ? new Date(date).getTime() : NaN);
  const done = rows.filter((row) => row.started_at && row.finished_at);
  return [
    stage(
      'submit→stored row',
      done.map((row) => time(row.created_at) - (submittedAt.get(row.request_id) ?? NaN)),
    ),
    stage(
      'row→claimed',
      done.map((row) => time(row.started_at) - time(row.created_at)),
    ),
    stage(
      'claimed→finished',
      done.map((row) => time(row.finished_at) - time(row.started_at)),
    ),
    stage(
      'finished→seen by the client',
      done
        .filter((row) => observedById.has(row.request_id))
        .map(
          (row) =>
            (submittedAt.get(row.request_id) ?? NaN) +
            (observedById.get(row.request_id) ?? NaN) -
            time(row.finished_at),
        ),
    ),
  ].join('; ');
}

/** The p99 of submit-to-stored-result latency in each window of the sustained run (is the tail spread out, or one stretch?). */
function asyncTimeline(rows: StoredRun[], submittedAt: Map<string, number>, wallStart: number): string {
  const windows = new Map<number, number[]>();
  for (const row of rows) {
    const submitted = submittedAt.get(row.request_id);
    if (submitted === undefined || !row.finished_at) continue;
    const window = Math.floor((submitted - wallStart) / (ASYNC_WINDOW_SECONDS * 1000));
    const values = windows.get(window) ?? [];
    values.push(new Date(row.finished_at).getTime() - submitted);
    windows.set(window, values);
  }
  return `${[...windows.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, values]) => fixed(percentile(values, 99), 0))
    .join(', ')} ms`;
}

interface Goal {
  name: string;
  measured: string;
  met: boolean;
}
const goals: Goal[] = [];
const goal = (name: string, measured: string, met: boolean) => goals.push({ name, measured, met });

/** Submits a batch and waits until it has finished; answers its status and the milliseconds from submit to finished. */
async function runBatch(
  token: Record<string, string>,
  parameters: unknown[],
): Promise<{ status: any; submitMs: number; totalMs: number }> {
  const started = performance.now();
  const submitted = await send('POST', '/api/batch/score', token, { scenarioName: SCENARIO, parameters });
  if (submitted.status !== 202) throw new Error(`batch submit answered ${submitted.status}: ${submitted.text}`);
  const submitMs = performance.now() - started;
  for (;;) {
    const status = json(await send('GET', `/api/batch/${json(submitted).batchTaskId}`, token));
    if (status.state === 'FINISHED') return { status, submitMs, totalMs: performance.now() - started };
    await sleep(10);
  }
}

/** Nanoseconds per run that the run listeners cost on the hot path, measured in this process (no I/O: counting only). */
function listenerCost(): { metricsNs: number; statisticsNs: number } {
  const logger = createLogger('silent');
  const metrics = new PrometheusMetrics({ probeTimeoutMs: 1000, maxScenarioSeries: 2000 }, logger);
  const statistics = new RunStatisticsRecorder(
    new StatisticsStore(createDatabase(DATABASE_URL, { min: 0, max: 1 })),
    { flushMs: 3_600_000, retentionDays: 30 },
    logger,
  );
  const scenario: DeployedScenario = {
    scenarioId: 1,
    ownerId: 1,
    ownerName: 'bench',
    name: SCENARIO,
    versionId: 1,
    version: '1',
    cacheKey: 'version:1',
    document: referenceScenario(),
  };
  const runs = 1_000_000;
  // The best of five: on a busy machine the fastest pass is the closest to the code's own cost.
  const time = (listener: {
    runFinished(run: { scenario: DeployedScenario; mode: 'sync'; errorCode: null; durationMs: number }): void;
  }) => {
    let best = Infinity;
    for (let pass = 0; pass < 5; pass += 1) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < runs; i += 1)
        listener.runFinished({ scenario, mode: 'sync', errorCode: null, durationMs: 0.3 + (i % 7) * 0.05 });
      best = Math.min(best, Number(process.hrtime.bigint() - started) / runs);
    }
    return best;
  };
  return { metricsNs: time(metrics), statisticsNs: time(statistics) };
}

async function main(): Promise<void> {
  await ensureDatabaseExists(DATABASE_URL);
  const db = createDatabase(DATABASE_URL, { min: 0, max: 4 });
  await migrateToLatest(db);
  const users = new UserService(new UserStore(db), { scoreTokenCacheMs: 0 });
  const created = await users.ensureUser(`bench-${randomUUID().slice(0, 8)}`, false);
  const user = { ...created, scoreToken: (await users.issueScoreToken(created.id)) as string };
  const doc = ONNX_MODEL ? await onnxScenario(db, user.id) : referenceScenario();
  const [scenarioId] = await db('scenarios').insert({ owner_id: user.id, name: SCENARIO, next_version: 2 });
  await db('scenario_versions').insert({
    scenario_id: scenarioId,
    status: 'DEPLOYED',
    version_number: 1,
    content: doc.content,
    node_properties: JSON.stringify(doc.nodeProperties),
  });
  const [unrecordedId] = await db('scenarios').insert({
    owner_id: user.id,
    name: UNRECORDED_SCENARIO,
    next_version: 2,
  });
  await db('scenario_versions').insert({
    scenario_id: unrecordedId,
    status: 'DEPLOYED',
    version_number: 1,
    content: doc.content,
    node_properties: JSON.stringify(doc.nodeProperties),
  });
  await setRecording(db, Number(scenarioId), !RECORDING_NULL);
  await setRecording(db, Number(unrecordedId), false);
  const redis = new Redis(JOBS_URL);
  const token = { 'score-token': user.scoreToken };
  const inputs = sampleInputs(Math.max(BATCH_ELEMENTS, RESULTS_ELEMENTS, 1000));
  const report = (line: string) => console.log(line);

  try {
    // 1. Sync scoring vs the ceiling, one process each, measured one after the other.
    const bareChild = spawn(process.execPath, ['--input-type=module', '-e', BARE_SERVER], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(bareChild);
    const api = startProcess('src/main.ts', { PORT: String(API_PORT), RUN_WORKER: 'false' });
    await waitUntilUp(API_PORT);
    await sleep(300);
    const body = JSON.stringify(inputs[0]);
    const check = await send('POST', `/api/scenario/code/remote/score?name=${SCENARIO}`, token, inputs[0]);
    if (check.status !== 200) throw new Error(`sync score answered ${check.status}: ${check.text}`);
    // The ceiling is measured whenever a part needs it (sync, and async without BENCH_ASYNC_RATE).
    const needsCeiling = PARTS.has('sync') || (PARTS.has('async') && process.env.BENCH_ASYNC_RATE === undefined);
    let ceiling = { rps: NaN, p50: NaN, p99: NaN, non2xx: 0 };
    if (needsCeiling) {
      await cannon(BARE_PORT, user.scoreToken, body).catch(() => undefined); // warm-up (short runs are noisy)
      ceiling = await cannon(BARE_PORT, user.scoreToken, body);
    }
    if (PARTS.has('sync')) {
      const scenarioOf = { on: SCENARIO, off: UNRECORDED_SCENARIO } as const;
      // Warm-up of each (compilation, connections, the records' first inserts).
      for (const recording of ['off', 'on'] as const)
        await cannon(API_PORT, user.scoreToken, body, api.pid, {
          scenario: scenarioOf[recording],
          seconds: RECORDING_SECONDS,
        });
      // Recording off and on (the default: every sync run recorded), alternating, so drift of a loaded machine hits both.
      const runs: Record<'off' | 'on', CannonResult[]> = { off: [], on: [] };
      const comparedFrom = new Date();
      for (let pair = 0; pair < RECORDING_PAIRS; pair += 1) {
        // off-on, on-off, off-on, …: a machine whose load drifts during the comparison favours neither.
        for (const recording of pair % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
          runs[recording].push(
            await cannon(API_PORT, user.scoreToken, body, api.pid, {
              scenario: scenarioOf[recording],
              seconds: RECORDING_SECONDS,
            }),
          );
        }
      }
      const [unrecorded, sync] = [mean(runs.off), mean(runs.on)];
      const pairs = runs.on.map(
        (on, pair) =>
          `${fixed(runs.off[pair].rps, 0)} → ${fixed(on.rps, 0)} (${fixed((100 * on.rps) / runs.off[pair].rps)} %)`,
      );
      const recorded = await recordsStored(
        db,
        Number(scenarioId),
        comparedFrom,
        RECORDING_NULL ? 0 : runs.on.reduce((sum, run) => sum + run.ok, 0),
      );
      if (RECORDING_NULL)
        report('A/A run (BENCH_RECORDING_NULL=1): "recording on" below is a second unrecorded scenario');
      report(
        `sync score (64 connections, ${RECORDING_SECONDS} s each, 1 process; recording every run, mean of ${RECORDING_PAIRS}): ${fixed(sync.rps, 0)} req/s, p50 ${fixed(sync.p50)} ms, p99 ${fixed(sync.p99)} ms, non-2xx ${sync.non2xx}`,
      );
      report(
        `sync score, recording off (same run, mean of ${RECORDING_PAIRS}):   ${fixed(unrecorded.rps, 0)} req/s, p50 ${fixed(unrecorded.p50)} ms, p99 ${fixed(unrecorded.p99)} ms, non-2xx ${unrecorded.non2xx}`,
      );
      report(`  req/s off → on, pair by pair: ${pairs.join(', ')}`);
      // Less sensitive to a loaded machine than req/s: what each answer cost the API process (its threads included; not MariaDB's share).
      report(
        `  API process CPU per answered request: ${fixed(unrecorded.cpuMicros, 0)} µs off, ${fixed(sync.cpuMicros, 0)} µs on (+${fixed(sync.cpuMicros - unrecorded.cpuMicros, 0)} µs; a CPU-bound API would keep ${fixed((100 * unrecorded.cpuMicros) / sync.cpuMicros)} %)`,
      );
      report(
        `  of which the API's main thread (its event loop): ${fixed(unrecorded.mainCpuMicros, 0)} µs off, ${fixed(sync.mainCpuMicros, 0)} µs on (+${fixed(sync.mainCpuMicros - unrecorded.mainCpuMicros, 0)} µs); autocannon (the load, this process): ${fixed(unrecorded.loadCpuMicros, 0)} µs off, ${fixed(sync.loadCpuMicros, 0)} µs on`,
      );
      // The database's share: on these machines it runs on the same cores as the API and autocannon, so its work comes off the throughput too.
      report(
        `  MariaDB CPU per answered request: ${fixed(unrecorded.dbCpuMicros, 0)} µs off, ${fixed(sync.dbCpuMicros, 0)} µs on (+${fixed(sync.dbCpuMicros - unrecorded.dbCpuMicros, 0)} µs; API + MariaDB would keep ${fixed((100 * (unrecorded.cpuMicros + unrecorded.dbCpuMicros)) / (sync.cpuMicros + sync.dbCpuMicros))} %)`,
      );
      // autocannon leaves out the answers still in flight when a run ends (up to one per connection), so a few more records than counted answers is expected.
      report(
        `  decision records stored: ${recorded.stored} for the ${recorded.expected} runs autocannon counted while recording (${Math.max(0, recorded.expected - recorded.stored)} missing)`,
      );
      report(
        `bare Express ceiling (same run):     ${fixed(ceiling.rps, 0)} req/s, p50 ${ceiling.p50} ms, p99 ${ceiling.p99} ms`,
      );
      // The goal is judged on the median of the pairs' ratios: each pair is measured back to back (slow drift
      // of a shared machine cancels out), and the median is not moved by one pair a neighbour disturbed,
      // which moves the ratio of the means by several points (docs/benchmarks.md).
      const ratios = runs.on.map((on, pair) => on.rps / runs.off[pair].rps).sort((a, b) => a - b);
      const kept =
        ratios.length % 2 === 1
          ? ratios[(ratios.length - 1) / 2]
          : (ratios[ratios.length / 2 - 1] + ratios[ratios.length / 2]) / 2;
      const quartiles = `${fixed(100 * percentile(ratios, 25))}–${fixed(100 * percentile(ratios, 75))} %`;
      report(
        `  recording on / off: median of the ${RECORDING_PAIRS} pairs ${fixed(100 * kept)} % (middle half of the pairs ${quartiles}), ratio of the means ${fixed((100 * sync.rps) / unrecorded.rps)} %`,
      );
      if (!RECORDING_NULL)
        goal(
          'sync score with recording ≥ 90 % of recording off (median of pairs)',
          `${fixed(100 * kept)} % (${recorded.stored}/${recorded.expected} recorded)`,
          kept >= 0.9 && recorded.stored >= recorded.expected && sync.non2xx === 0,
        );
      // Against the ceiling: runs of BENCH_SYNC_SECONDS each, interleaved (bare, score, score, bare, …), so a
      // machine whose load drifts favours neither; the goals are judged on the medians of the rounds.
      const rounds: { bare: CannonResult; score: CannonResult }[] = [];
      for (let round = 0; round < CEILING_ROUNDS; round += 1) {
        const measure = {
          bare: () => cannon(BARE_PORT, user.scoreToken, body),
          score: () => cannon(API_PORT, user.scoreToken, body, api.pid, { scenario: SCENARIO, seconds: SYNC_SECONDS }),
        };
        const order = round % 2 === 0 ? (['bare', 'score'] as const) : (['score', 'bare'] as const);
        const taken: Partial<Record<'bare' | 'score', CannonResult>> = {};
        for (const side of order) taken[side] = await measure[side]();
        rounds.push(taken as { bare: CannonResult; score: CannonResult });
      }
      const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
      const share = middle(rounds.map((r) => r.score.rps / r.bare.rps));
      const tail = middle(rounds.map((r) => r.score.p99 / Math.max(r.bare.p99, 0.01)));
      report(
        `sync score (recorded) vs bare Express, ${CEILING_ROUNDS} rounds of ${SYNC_SECONDS} s interleaved: ${rounds.map((r) => `${fixed(r.score.rps, 0)} vs ${fixed(r.bare.rps, 0)} req/s (p99 ${fixed(r.score.p99)} vs ${fixed(r.bare.p99)} ms)`).join('; ')}`,
      );
      goal(
        'sync score ≥ 130 % of bare Express req/s (median of rounds)',
        `${fixed(100 * share)} %`,
        share >= 1.3 && rounds.every((r) => r.score.non2xx === 0),
      );
      goal('sync score p99 ≤ 1.5× bare Express p99 (median of rounds)', `${fixed(tail, 2)}×`, tail <= 1.5);

      bareChild.kill('SIGTERM');
      // 1b. The same with metrics on, against the process above (metrics off), interleaved: on, off, on, off, …
      // BENCH_METRICS_NULL=1: the second process without metrics too (an A/A run: what two processes differ by alone).
      const withMetrics = startProcess('src/main.ts', {
        PORT: String(METRICS_API_PORT),
        RUN_WORKER: 'false',
        METRICS_ENABLED: process.env.BENCH_METRICS_NULL ? 'false' : 'true',
        METRICS_PORT: String(METRICS_PORT),
      });
      await waitUntilUp(METRICS_API_PORT);
      await cannon(METRICS_API_PORT, user.scoreToken, body); // warm-up
      // Both sides in runs of BENCH_SYNC_SECONDS (the recording pairs' shorter runs are not comparable).
      const off: Array<{ rps: number; p99: number }> = [];
      const on: Array<{ rps: number; p99: number }> = [];
      for (let round = 0; round < METRICS_ROUNDS; round += 1) {
        on.push(await cannon(METRICS_API_PORT, user.scoreToken, body));
        off.push(await cannon(API_PORT, user.scoreToken, body));
      }
      const median = (runs: Array<{ rps: number }>) =>
        percentile(
          runs.map((run) => run.rps),
          50,
        );
      const metricsRatio = median(on) / median(off);
      report(
        `sync score, metrics on vs off (${METRICS_ROUNDS} runs each, interleaved): on ${on.map((run) => fixed(run.rps, 0)).join(', ')} req/s (p99 ${on.map((run) => fixed(run.p99)).join(', ')} ms); off ${off.map((run) => fixed(run.rps, 0)).join(', ')} req/s (p99 ${off.map((run) => fixed(run.p99)).join(', ')} ms); ratio of the medians ${fixed(metricsRatio, 3)}`,
      );
      if (!process.env.BENCH_METRICS_NULL) {
        const scrapeStarted = performance.now();
        const scraped = await new Promise<string>((resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port: METRICS_PORT, path: '/metrics', agent: false }, (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
            })
            .on('error', reject);
        });
        const counted = /scoring_runs_total\{[^}]*mode="sync",outcome="succeeded"\} (\d+)/.exec(scraped)?.[1];
        report(
          `  one scrape: ${fixed(performance.now() - scrapeStarted)} ms, ${fixed(scraped.length / 1024)} KiB; scoring_runs_total (sync, succeeded) = ${counted}`,
        );
      }
      goal('sync score with metrics on ≥ 95 % of metrics off', `${fixed(100 * metricsRatio)} %`, metricsRatio >= 0.95);
      withMetrics.kill('SIGTERM');
      const perRun = listenerCost();
      report(
        `run listeners in-process, per run (best of 5 passes): Prometheus metrics ${fixed(perRun.metricsNs, 0)} ns, run statistics ${fixed(perRun.statisticsNs, 0)} ns (a sync score costs about ${fixed(1e9 / Math.max(sync.rps, 1) / 1000, 0)} µs of the process)`,
      );
    }
    if (PARTS.has('shadow')) {
      // 1c. One shadow at 100 % sampling: pairs of the unrecorded scenario and a copy of it with a shadow, alternating.
      const [shadowedId] = await db('scenarios').insert({
        owner_id: user.id,
        name: SHADOWED_SCENARIO,
        next_version: 2,
      });
      const [versionId] = await db('scenario_versions').insert({
        scenario_id: shadowedId,
        status: 'DEPLOYED',
        version_number: 1,
        content: doc.content,
        node_properties: JSON.stringify(doc.nodeProperties),
      });
      await setRecording(db, Number(shadowedId), false);
      const shadowId = randomUUID();
      await db('shadows').insert({
        id: shadowId,
        scenario_id: shadowedId,
        owner_id: user.id,
        created_by: 'bench',
        shadow_version: '1',
        shadow_version_id: versionId,
        shadow_hash: contentHash(doc.content, JSON.stringify(doc.nodeProperties)),
        shadow_document: JSON.stringify(doc),
        champion_version: '1',
        champion_version_id: versionId,
        sample_rate: 1,
        outputs: JSON.stringify(['decision']),
        state: 'RUNNING',
      });
      const scenarioOf = { without: UNRECORDED_SCENARIO, with: SHADOWED_SCENARIO } as const;
      for (const side of ['without', 'with'] as const)
        await cannon(API_PORT, user.scoreToken, body, api.pid, { scenario: scenarioOf[side], seconds: SHADOW_SECONDS });
      const runs: Record<'without' | 'with', CannonResult[]> = { without: [], with: [] };
      for (let pair = 0; pair < SHADOW_PAIRS; pair += 1) {
        for (const side of pair % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
          // BENCH_SHADOW_SIDE (profiling): one side only, so a profile of the API process is of that side alone.
          if (SHADOW_SIDE && side !== SHADOW_SIDE) continue;
          runs[side].push(
            await cannon(API_PORT, user.scoreToken, body, api.pid, {
              scenario: scenarioOf[side],
              seconds: SHADOW_SECONDS,
            }),
          );
        }
      }
      await sleep(1500);
      if (SHADOW_SIDE) {
        const [{ stored }] = await db('shadow_runs').where({ shadow_id: shadowId }).count({ stored: '*' });
        const only = mean(runs[SHADOW_SIDE]);
        report(
          `sync score, ${SHADOW_SIDE} the shadow only (BENCH_SHADOW_SIDE): ${runs[SHADOW_SIDE].map((run) => fixed(run.rps, 0)).join(', ')} req/s; API process CPU per answered request ${fixed(only.cpuMicros, 0)} µs (main thread ${fixed(only.mainCpuMicros, 0)} µs), engine hosts ${fixed(only.hostCpuMicros, 0)} µs, MariaDB ${fixed(only.dbCpuMicros, 0)} µs; ${runs[SHADOW_SIDE].reduce((sum, run) => sum + run.ok, 0)} answers, ${Number(stored)} shadow runs stored`,
        );
      } else {
        const [{ stored }] = await db('shadow_runs').where({ shadow_id: shadowId }).count({ stored: '*' });
        const { skipped } = (await db('shadows').where({ id: shadowId }).first('skipped')) as { skipped: number };
        const answered = runs.with.reduce((sum, run) => sum + run.ok, 0) + 0;
        const middle = (values: number[]) => percentile(values, 50);
        const rpsRatio = middle(runs.with.map((run, pair) => run.rps / runs.without[pair].rps));
        const p99Ratio = middle(runs.with.map((run, pair) => run.p99 / Math.max(runs.without[pair].p99, 0.01)));
        const share = process.env.SHADOW_ENGINE_SHARE ?? 'default (0.25)';
        report(
          `sync score with one shadow at 100 % (SHADOW_ENGINE_SHARE ${share}; ${SHADOW_PAIRS} pairs of ${SHADOW_SECONDS} s): with ${runs.with.map((run) => fixed(run.rps, 0)).join(', ')} req/s (p99 ${runs.with.map((run) => fixed(run.p99)).join(', ')} ms); without ${runs.without.map((run) => fixed(run.rps, 0)).join(', ')} req/s (p99 ${runs.without.map((run) => fixed(run.p99)).join(', ')} ms)`,
        );
        report(
          `  shadow runs stored ${Number(stored)}, skipped ${Number(skipped)} (budget or in flight), for the ${answered} shadowed answers autocannon counted (warm-up not included)`,
        );
        // Where a shadow's cost lands: the API process (its event loop: capture, hand-off, rows) and its engine hosts.
        const [without, withShadow] = [mean(runs.without), mean(runs.with)];
        report(
          `  API process CPU per answered request: ${fixed(without.cpuMicros, 0)} µs without, ${fixed(withShadow.cpuMicros, 0)} µs with (main thread ${fixed(without.mainCpuMicros, 0)} → ${fixed(withShadow.mainCpuMicros, 0)} µs); engine hosts ${fixed(without.hostCpuMicros, 0)} → ${fixed(withShadow.hostCpuMicros, 0)} µs; MariaDB ${fixed(without.dbCpuMicros, 0)} → ${fixed(withShadow.dbCpuMicros, 0)} µs`,
        );
        const exhausted = process.env.SHADOW_ENGINE_SHARE === '0';
        goal(
          `sync score with a shadow at 100 % ≥ ${exhausted ? 95 : 85} % of without (median of pairs)`,
          `${fixed(100 * rpsRatio)} %`,
          rpsRatio >= (exhausted ? 0.95 : 0.85) && runs.with.every((run) => run.non2xx === 0),
        );
        if (!exhausted)
          goal(
            'sync score p99 with a shadow ≤ 1.2× without (median of pairs)',
            `${fixed(p99Ratio, 2)}×`,
            p99Ratio <= 1.2,
          );
      }
    }
    if (ONLY_SYNC || ONLY_SHADOW) {
      api.kill('SIGTERM');
      printGoals();
      return;
    }

    // The worker processes for 2–5.
    const workers = Array.from({ length: WORKERS }, () => startProcess('src/worker.ts', {}));
    await sleep(1500);
    const keysBefore = await countKeys(redis);

    // 2. A batch, submit to last result (every element recorded, the default); once more without recording, for information.
    await setRecording(db, Number(scenarioId), true);
    let batch: Awaited<ReturnType<typeof runBatch>> | undefined;
    // Warm-up (compilation, connections) of every worker process: chunks of 500 go to whichever worker takes them
    // first, so a warm-up of one chunk per worker and more leaves none cold for the measured batch.
    if (PARTS.has('batch') || PARTS.has('results'))
      await runBatch(token, inputs.slice(0, Math.min(inputs.length, 500 * WORKERS * 4)));
    if (PARTS.has('batch')) {
      const cpu = new CpuMeter({
        API: [api.pid],
        [WORKERS === 1 ? 'worker' : 'workers']: workers.map((child) => child.pid),
        MariaDB: databaseServerPids(),
        'this bench': [process.pid],
      });
      const perElement = new PerElementCpu(workers);
      const monotonicStart = process.hrtime.bigint() / 1000n;
      batch = await runBatch(token, inputs.slice(0, BATCH_ELEMENTS));
      // The clock of --cpu-prof's profiles (CLOCK_MONOTONIC, µs): the measured batch's window in the services' profiles.
      if (process.env.BENCH_NODE_ARGS?.includes('--cpu-prof'))
        report(
          `  profile window of the measured batch: ${monotonicStart}–${process.hrtime.bigint() / 1000n} µs (monotonic)`,
        );
      if (batch.status.failed !== 0) throw new Error(`batch ended with ${batch.status.failed} failed elements`);
      const batchRate = (BATCH_ELEMENTS * 1000) / batch.totalMs;
      report(
        `batch of ${BATCH_ELEMENTS} (${WORKERS} worker process${WORKERS === 1 ? '' : 'es'}): submit ${fixed(batch.submitMs, 0)} ms, submit to last result ${fixed(batch.totalMs, 0)} ms`,
      );
      report(`  CPU time used meanwhile: ${cpu.report()} (MariaDB serves the whole machine)`);
      report(`  CPU per element: ${perElement.report(BATCH_ELEMENTS)}`);
      if (PHASES) await sleep(300); // the services' last log lines may still be on their way
      if (PHASES) report(`  phases: ${phaseReport(batch.status.batchTaskId)}`);
      // BENCH_BATCH_REPEAT: more batches of the same size afterwards, for information (the goal uses the first).
      for (let k = 1; k < Number(process.env.BENCH_BATCH_REPEAT ?? 1); k += 1) {
        const again = new CpuMeter({
          API: [api.pid],
          [WORKERS === 1 ? 'worker' : 'workers']: workers.map((child) => child.pid),
          MariaDB: databaseServerPids(),
        });
        const repeat = await runBatch(token, inputs.slice(0, BATCH_ELEMENTS));
        report(
          `  again: submit ${fixed(repeat.submitMs, 0)} ms, submit to last result ${fixed(repeat.totalMs, 0)} ms; CPU ${again.report()}`,
        );
        if (PHASES) await sleep(300);
        if (PHASES) report(`    phases: ${phaseReport(repeat.status.batchTaskId)}`);
      }
      // The same batch with recording off, for information (the goal is the recorded batch above).
      await setRecording(db, Number(scenarioId), false);
      const unrecordedPerElement = new PerElementCpu(workers);
      const unrecordedBatch = await runBatch(token, inputs.slice(0, BATCH_ELEMENTS));
      await setRecording(db, Number(scenarioId), true);
      report(
        `  the same batch with recording off (same run): submit to last result ${fixed(unrecordedBatch.totalMs, 0)} ms = ${fixed((BATCH_ELEMENTS * 1000) / unrecordedBatch.totalMs, 0)} elements/s (recording keeps ${fixed((100 * unrecordedBatch.totalMs) / batch.totalMs)} %); CPU per element: ${unrecordedPerElement.report(BATCH_ELEMENTS)}`,
      );
      goal(
        `batch of ${BATCH_ELEMENTS.toLocaleString('en-US')} ≥ 10,000 elements/s`,
        `${fixed(batchRate, 0)} elements/s`,
        batchRate >= 10_000,
      );
    }

    // 3. Bulk results of a batch.
    if (PARTS.has('results')) {
      const big =
        batch && RESULTS_ELEMENTS === BATCH_ELEMENTS ? batch : await runBatch(token, inputs.slice(0, RESULTS_ELEMENTS));
      const streamed = async (accept: string) => {
        const started = performance.now();
        const answer = await send('GET', `/api/batch/${big.status.batchTaskId}/results`, { ...token, accept });
        const ms = performance.now() - started;
        if (answer.status !== 200) throw new Error(`getBatchResults answered ${answer.status}`);
        return { ms, lines: answer.text.trimEnd().split('\n').length, bytes: Buffer.byteLength(answer.text) };
      };
      await streamed('application/x-ndjson'); // warm-up
      const ndjson = await streamed('application/x-ndjson');
      const csv = await streamed('text/csv');
      report(
        `batch results of ${RESULTS_ELEMENTS}: NDJSON ${ndjson.lines} lines, ${fixed(ndjson.bytes / 1e6)} MB in ${fixed(ndjson.ms, 0)} ms; CSV ${csv.lines} lines in ${fixed(csv.ms, 0)} ms`,
      );
      goal(
        `${RESULTS_ELEMENTS.toLocaleString('en-US')} batch results streamed in < 1 s`,
        `${fixed(ndjson.ms, 0)} ms`,
        ndjson.lines === RESULTS_ELEMENTS && ndjson.ms < 1000,
      );
    }

    if (PARTS.has('async')) {
      // 4. Async submit-to-result latency when idle (sequential; poll every 1 ms).
      const idle: number[] = [];
      for (let i = 0; i < 200; i += 1) {
        const started = performance.now();
        const sub = json(await send('POST', `/api/scenario/code/scoreasync/${SCENARIO}`, token, inputs[i]));
        for (;;) {
          const res = await send('GET', `/api/scenario/code/scoreasyncresult/${SCENARIO}`, {
            ...token,
            'x-sce-requestid': sub.requestId,
          });
          if (res.status === 200) break;
          await sleep(1);
        }
        idle.push(performance.now() - started);
      }
      report(
        `async idle, submit to result (200 sequential runs): p50 ${fixed(percentile(idle, 50))} ms, p99 ${fixed(percentile(idle, 99))} ms`,
      );

      // 5. Sustained async load: open loop at 30 % of the ceiling's rate.
      const rate = Number(process.env.BENCH_ASYNC_RATE ?? Math.round(ASYNC_SHARE * ceiling.rps));
      const submittedAt = new Map<string, number>();
      const observed: number[] = [];
      const observedById = new Map<string, number>();
      let submitErrors = 0;
      const submitErrorKinds = new Map<string, number>();
      let pollErrors = 0;
      const pending: Promise<void>[] = [];
      const pollClosely = async (requestId: string, started: number) => {
        for (let tries = 0; tries < 3000; tries += 1) {
          const res = await send('GET', `/api/scenario/code/scoreasyncresult/${SCENARIO}`, {
            ...token,
            'x-sce-requestid': requestId,
          }).catch(() => ({ status: 0 }));
          if (res.status === 200) {
            observed.push(performance.now() - started);
            observedById.set(requestId, performance.now() - started);
            return;
          }
          if (res.status !== 202) {
            pollErrors += 1;
            return;
          }
          await sleep(10);
        }
        pollErrors += 1;
      };
      const asyncCpu = new CpuMeter({
        API: [api.pid],
        [WORKERS === 1 ? 'worker' : 'workers']: workers.map((child) => child.pid),
        MariaDB: databaseServerPids(),
        'this bench': [process.pid],
      });
      const loadStart = performance.now();
      const wallStart = Date.now();
      let sent = 0;
      const total = rate * ASYNC_SECONDS;
      while (sent < total) {
        const due = Math.min(total, Math.floor(((performance.now() - loadStart) / 1000) * rate));
        while (sent < due) {
          const requestId = `load-${sent}-${randomUUID().slice(0, 8)}`;
          const sample = sent % SAMPLE_EVERY === 0;
          const started = performance.now();
          submittedAt.set(requestId, Date.now());
          sent += 1;
          pending.push(
            send(
              'POST',
              `/api/scenario/code/scoreasync/${SCENARIO}`,
              { ...token, 'x-sce-requestid': requestId },
              inputs[sent % inputs.length],
            )
              .then((res) => {
                if (res.status === 202) return sample ? pollClosely(requestId, started) : undefined;
                submitErrors += 1;
                const code = `${res.status} ${res.text.slice(0, 120)}`;
                submitErrorKinds.set(code, (submitErrorKinds.get(code) ?? 0) + 1);
                return undefined;
              })
              .catch((error: Error) => {
                submitErrors += 1;
                submitErrorKinds.set(error.message, (submitErrorKinds.get(error.message) ?? 0) + 1);
              }),
          );
        }
        await sleep(2);
      }
      const submitSeconds = (performance.now() - loadStart) / 1000;
      await Promise.all(pending);
      const asyncCpuUsed = asyncCpu.report();
      // Every run's stored result: wait (bounded) until all are stored, then read finished_at.
      let rows: Array<{
        request_id: string;
        state: string;
        created_at: Date;
        started_at: Date | null;
        finished_at: Date | null;
      }> = [];
      for (let i = 0; i < 120; i += 1) {
        rows = await db('run_results')
          .where('user_id', user.id)
          .where('request_id', 'like', 'load-%')
          .where('created_at', '>=', new Date(wallStart - 1000))
          .select('request_id', 'state', 'created_at', 'started_at', 'finished_at');
        if (rows.length === sent && rows.every((row) => row.finished_at)) break;
        await sleep(500);
      }
      const stored = rows
        .filter((row) => row.finished_at)
        .map((row) => new Date(row.finished_at as Date).getTime() - (submittedAt.get(row.request_id) ?? 0));
      const succeeded = rows.filter((row) => row.state === 'SUCCEEDED').length;
      await sleep(1500);
      const keysAfter = await countKeys(redis);
      const offered = sent / submitSeconds;
      report(
        `async sustained: ${sent} submitted in ${fixed(submitSeconds)} s = ${fixed(offered, 0)}/s (target ${rate}/s = ${ASYNC_SHARE * 100} % of the ceiling); submit errors ${submitErrors}, poll errors ${pollErrors}; ${succeeded}/${sent} runs stored SUCCEEDED`,
      );
      report(
        `  submit to result, as seen by a client polling every 10 ms (1 run in ${SAMPLE_EVERY}, ${observed.length} runs): p50 ${fixed(percentile(observed, 50))} ms, p99 ${fixed(percentile(observed, 99))} ms`,
      );
      report(
        `  submit to stored result (finished_at − submit time, every run): p50 ${fixed(percentile(stored, 50))} ms, p99 ${fixed(percentile(stored, 99))} ms`,
      );
      report(`  CPU time used while submitting and polling: ${asyncCpuUsed}`);
      report(`  stages, every run: ${asyncStages(rows, submittedAt, observedById)}`);
      report(
        `  p99 of submit to stored result per ${ASYNC_WINDOW_SECONDS} s of the run: ${asyncTimeline(rows, submittedAt, wallStart)}`,
      );
      report(
        `  job-store keys under the bench prefix: ${keysBefore} before, ${keysAfter} after (finished jobs are removed)`,
      );
      for (const [kind, count] of submitErrorKinds) report(`  submit error ×${count}: ${kind}`);
      const complete = submitErrors === 0 && pollErrors === 0 && succeeded === sent && offered >= 0.97 * rate;
      goal(
        `async at 30 % of bare Express (${rate}/s) for ${ASYNC_SECONDS} s, every run stored`,
        `${fixed(offered, 0)}/s, ${succeeded}/${sent} stored, ${submitErrors + pollErrors} errors`,
        complete,
      );
      const p50 = Math.max(percentile(observed, 50), percentile(stored, 50));
      const p99 = Math.max(percentile(observed, 99), percentile(stored, 99));
      goal('async submit-to-result p50 < 100 ms', `${fixed(p50)} ms`, p50 < 100);
      goal('async submit-to-result p99 < 500 ms', `${fixed(p99)} ms`, p99 < 500);
      goal(
        'job store holds no finished work',
        `${keysBefore} keys before, ${keysAfter} after`,
        keysAfter <= keysBefore,
      );
    }
    api.kill('SIGTERM');
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    // A process profiled with --cpu-prof writes its profile only when it exits by itself: give it the time to.
    const exitWaitMs = (process.env.BENCH_NODE_ARGS ?? '').includes('--cpu-prof') ? 15_000 : 500;
    for (let waited = 0; waited < exitWaitMs && children.some(running); waited += 100) await sleep(100);
    for (const child of children) if (running(child)) child.kill('SIGKILL');
    await db('decision_record_pages')
      .where({ owner_id: user.id })
      .del()
      .catch(() => undefined);
    await db('recording_settings')
      .where({ scenario_id: scenarioId })
      .del()
      .catch(() => undefined);
    await db('scenarios')
      .where({ owner_id: user.id })
      .del()
      .catch(() => undefined);
    await db('run_results')
      .where({ user_id: user.id })
      .del()
      .catch(() => undefined);
    await db('batches')
      .where({ user_id: user.id })
      .del()
      .catch(() => undefined);
    await db('models')
      .where({ owner_id: user.id })
      .del()
      .catch(() => undefined);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    redis.disconnect();
    await db.destroy();
    agent.destroy();
  }
  printGoals();
}

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function printGoals(): void {
  console.log(
    '\ngoal                                                              measured                                  met',
  );
  for (const { name, measured, met } of goals)
    console.log(`${name.padEnd(66)}${measured.padEnd(42)}${met ? 'yes' : 'NO'}`);
  console.log(
    `\nrun: npm run bench:http   (BENCH_SYNC_SECONDS=${SYNC_SECONDS} BENCH_RECORDING_PAIRS=${RECORDING_PAIRS} BENCH_RECORDING_SECONDS=${RECORDING_SECONDS} BENCH_ASYNC_SECONDS=${ASYNC_SECONDS} BENCH_WORKERS=${WORKERS}${ONLY_SYNC ? ' BENCH_ONLY=sync' : ''}; figures need an otherwise idle machine)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
