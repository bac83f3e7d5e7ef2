/**
 * Execution benchmarks over HTTP (`npm run bench:http`). Starts its own processes on a dedicated
 * database (`scoring_bench`) and job-store prefix, seeds a user and the reference credit scenario,
 * measures, cleans up:
 *   1. sync scoring with autocannon (64 connections, BENCH_SYNC_SECONDS, default 10) against a bare
 *      Express 5 endpoint returning a constant JSON (the ceiling), one process each;
 *   2. a 10,000-element batch, submit to last result;
 *   3. async submit-to-result latency when idle;
 *   4. sustained async load at BENCH_ASYNC_RATE submissions/s (default 1000) for BENCH_ASYNC_SECONDS
 *      (default 60), every result fetched; job-store keys counted before and after.
 * Processes: one API process (RUN_WORKER=false) and one worker process (`src/worker.ts`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { UserService } from '../../src/auth/user-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../../src/db/database.js';
import { referenceScenario, sampleInputs } from './reference-scenario.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_bench';
const JOBS_URL = process.env.BENCH_JOBS_URL ?? 'redis://127.0.0.1:6379/2';
const PREFIX = `scoring:bench:${randomUUID().slice(0, 8)}:`;
const API_PORT = Number(process.env.BENCH_API_PORT ?? 18080);
const BARE_PORT = API_PORT + 1;
const SYNC_SECONDS = Number(process.env.BENCH_SYNC_SECONDS ?? 10);
const ASYNC_SECONDS = Number(process.env.BENCH_ASYNC_SECONDS ?? 60);
const ASYNC_RATE = Number(process.env.BENCH_ASYNC_RATE ?? 1000);
const BATCH_ELEMENTS = Number(process.env.BENCH_BATCH_ELEMENTS ?? 10_000);
const SCENARIO = 'credit';

const children: ChildProcess[] = [];
// However this process ends (an error, a closed stdout pipe), it takes its service processes with it.
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function startProcess(script: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: {
      ...process.env, NODE_OPTIONS: '', APP_ENV: 'local', LOG_LEVEL: 'warn', DATABASE_URL, JOBS_URL, JOBS_KEY_PREFIX: PREFIX,
      LIMIT_BODY_BYTES: String(64 * 1024 * 1024), LIMIT_BATCH_ELEMENTS: String(Math.max(BATCH_ELEMENTS, 100_000)), ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

const BARE_SERVER = `
import express from 'express';
const app = express();
const body = ${JSON.stringify({ runId: 'x', scenarioName: SCENARIO, version: '1', state: 'SUCCEEDED', beginTime: null, endTime: null, result: { decision: 'APPROVE', tier: 'A', limitFactor: 1, score: 600, reasonCodes: [] }, error: null })};
app.post('/api/scenario/code/remote/score', (req, res) => res.json(body));
app.listen(${BARE_PORT});
`;

function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: API_PORT, method, path, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, headers: res.headers });
      });
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

async function waitUntilUp(port: number): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const up = await new Promise<boolean>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/health/live' }, (res) => { res.resume(); resolve(true); });
      req.on('error', () => resolve(false));
    });
    if (up) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on ${port}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const fixed = (n: number, digits = 1) => n.toFixed(digits);

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

async function cannon(port: number, token: string, body: string): Promise<{ rps: number; p50: number; p99: number; non2xx: number }> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/api/scenario/code/remote/score?name=${SCENARIO}`,
    method: 'POST', connections: 64, duration: SYNC_SECONDS,
    headers: { 'content-type': 'application/json', 'score-token': token }, body,
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx };
}

async function main(): Promise<void> {
  await ensureDatabaseExists(DATABASE_URL);
  const db = createDatabase(DATABASE_URL, { min: 0, max: 4 });
  await migrateToLatest(db);
  const users = new UserService(new UserStore(db), { scoreTokenCacheMs: 0 });
  const created = await users.ensureUser(`bench-${randomUUID().slice(0, 8)}`, false);
  const user = { ...created, scoreToken: (await users.issueScoreToken(created.id)) as string };
  const doc = referenceScenario();
  const [scenarioId] = await db('scenarios').insert({ owner_id: user.id, name: SCENARIO, next_version: 2 });
  await db('scenario_versions').insert({ scenario_id: scenarioId, status: 'DEPLOYED', version_number: 1, content: doc.content, node_properties: JSON.stringify(doc.nodeProperties) });
  const redis = new Redis(JOBS_URL);
  const token = { 'score-token': user.scoreToken };
  const inputs = sampleInputs(BATCH_ELEMENTS);
  const lines: string[] = [];
  const report = (line: string) => { console.log(line); lines.push(line); };

  try {
    // 1. Sync scoring vs the ceiling, one process each, measured one after the other.
    const bareChild = spawn(process.execPath, ['--input-type=module', '-e', BARE_SERVER], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(bareChild);
    const api = startProcess('src/main.ts', { PORT: String(API_PORT), RUN_WORKER: 'false' });
    await waitUntilUp(API_PORT);
    await sleep(300);
    const body = JSON.stringify(inputs[0]);
    const check = await send('POST', `/api/scenario/code/remote/score?name=${SCENARIO}`, token, inputs[0]);
    if (check.status !== 200) throw new Error(`sync score answered ${check.status}: ${JSON.stringify(check.body)}`);
    await cannon(BARE_PORT, user.scoreToken, body).catch(() => undefined); // warm-up (short runs are noisy)
    const ceiling = await cannon(BARE_PORT, user.scoreToken, body);
    await cannon(API_PORT, user.scoreToken, body);
    const sync = await cannon(API_PORT, user.scoreToken, body);
    report(`sync score (64 connections, ${SYNC_SECONDS} s, 1 process): ${fixed(sync.rps, 0)} req/s, p50 ${sync.p50} ms, p99 ${sync.p99} ms, non-2xx ${sync.non2xx}`);
    report(`bare Express ceiling (same):        ${fixed(ceiling.rps, 0)} req/s, p50 ${ceiling.p50} ms, p99 ${ceiling.p99} ms`);
    report(`ratio: ${fixed((100 * sync.rps) / ceiling.rps)}% of ceiling rps (goal ≥ 60%); p99 ${fixed(sync.p99 / Math.max(ceiling.p99, 1), 2)}× ceiling p99 (goal ≤ 2×)`);
    bareChild.kill('SIGTERM');

    // The worker process for 2–4.
    const worker = startProcess('src/worker.ts', {});
    await sleep(1500);
    const keysBefore = await countKeys(redis);

    // 2. A batch, submit to last result.
    const batchStart = performance.now();
    const submitted = await send('POST', '/api/batch/score', token, { scenarioName: SCENARIO, parameters: inputs });
    if (submitted.status !== 202) throw new Error(`batch submit answered ${submitted.status}: ${JSON.stringify(submitted.body)}`);
    const submitMs = performance.now() - batchStart;
    let status: any;
    for (;;) {
      status = (await send('GET', `/api/batch/${submitted.body.batchTaskId}`, token)).body;
      if (status.state === 'FINISHED') break;
      await sleep(25);
    }
    const last = await send('GET', `/api/scenario/code/scoreasyncresult/${SCENARIO}`, { ...token, 'x-sce-requestid': status.resultsIds[status.resultsIds.length - 1] });
    const batchMs = performance.now() - batchStart;
    if (last.status !== 200 || status.failed !== 0) throw new Error(`batch ended badly: ${JSON.stringify({ failed: status.failed, last: last.status })}`);
    report(`batch of ${BATCH_ELEMENTS}: submit ${fixed(submitMs, 0)} ms, submit to last result ${fixed(batchMs, 0)} ms = ${fixed((BATCH_ELEMENTS * 1000) / batchMs, 0)} elements/s (goal ≥ 5,000/s)`);

    // 3. Async submit-to-result latency when idle (sequential; poll every 1 ms).
    const idle: number[] = [];
    for (let i = 0; i < 200; i += 1) {
      const started = performance.now();
      const { body: sub } = await send('POST', `/api/scenario/code/scoreasync/${SCENARIO}`, token, inputs[i]);
      for (;;) {
        const res = await send('GET', `/api/scenario/code/scoreasyncresult/${SCENARIO}`, { ...token, 'x-sce-requestid': sub.requestId });
        if (res.status === 200) break;
        await sleep(1);
      }
      idle.push(performance.now() - started);
    }
    report(`async idle, submit to result (200 sequential runs): p50 ${fixed(percentile(idle, 50))} ms, p99 ${fixed(percentile(idle, 99))} ms (goal p50 < 20 ms)`);

    // 4. Sustained async load: open loop at ASYNC_RATE/s; every result fetched.
    const submittedAt = new Map<string, number>();
    const fetchedLatency: number[] = [];
    let submitErrors = 0;
    let fetchErrors = 0;
    const pendingFetches: Promise<void>[] = [];
    const fetchWhenDone = async (requestId: string, started: number) => {
      await sleep(20);
      for (let tries = 0; tries < 600; tries += 1) {
        const res = await send('GET', `/api/scenario/code/scoreasyncresult/${SCENARIO}`, { ...token, 'x-sce-requestid': requestId }).catch(() => ({ status: 0 }));
        if (res.status === 200) { fetchedLatency.push(performance.now() - started); return; }
        if (res.status !== 202) { fetchErrors += 1; return; }
        await sleep(Math.min(20 + tries * 10, 200));
      }
      fetchErrors += 1;
    };
    const loadStart = performance.now();
    const wallStart = Date.now();
    let sent = 0;
    const total = ASYNC_RATE * ASYNC_SECONDS;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - loadStart) / 1000) * ASYNC_RATE));
      while (sent < due) {
        const requestId = `load-${sent}-${randomUUID().slice(0, 8)}`;
        const started = performance.now();
        submittedAt.set(requestId, Date.now());
        sent += 1;
        pendingFetches.push(send('POST', `/api/scenario/code/scoreasync/${SCENARIO}`, { ...token, 'x-sce-requestid': requestId }, inputs[sent % inputs.length])
          .then((res) => (res.status === 202 ? fetchWhenDone(requestId, started) : void (submitErrors += 1)))
          .catch(() => void (submitErrors += 1)));
      }
      await sleep(5);
    }
    const submitSeconds = (performance.now() - loadStart) / 1000;
    await Promise.all(pendingFetches);
    const rows = (await db('run_results').where('user_id', user.id).where('request_id', 'like', 'load-%').where('created_at', '>=', new Date(wallStart - 1000)).select('request_id', 'finished_at')) as Array<{ request_id: string; finished_at: Date | null }>;
    const stored = rows.filter((r) => r.finished_at).map((r) => new Date(r.finished_at as Date).getTime() - (submittedAt.get(r.request_id) ?? 0));
    await sleep(1500);
    const keysAfter = await countKeys(redis);
    report(`async sustained: ${sent} submitted in ${fixed(submitSeconds)} s = ${fixed(sent / submitSeconds, 0)}/s offered (goal ≥ 1,000/s for ${ASYNC_SECONDS} s); submit errors ${submitErrors}, fetch errors ${fetchErrors}; fetched ${fetchedLatency.length}/${sent}`);
    report(`  submit to stored result (finished_at − submit time): p50 ${fixed(percentile(stored, 50))} ms, p99 ${fixed(percentile(stored, 99))} ms (goal p50 < 100 ms); as seen by polling fetchers: p50 ${fixed(percentile(fetchedLatency, 50))} ms`);
    report(`  job-store keys under the bench prefix: ${keysBefore} before, ${keysAfter} after (finished jobs are removed)`);
    worker.kill('SIGTERM');
    api.kill('SIGTERM');
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await sleep(500);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await db('scenarios').where({ owner_id: user.id }).del().catch(() => undefined);
    await db('run_results').where({ user_id: user.id }).del().catch(() => undefined);
    await db('batches').where({ user_id: user.id }).del().catch(() => undefined);
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
  console.log(`\nrun: npm run bench:http   (BENCH_SYNC_SECONDS=${SYNC_SECONDS} BENCH_ASYNC_SECONDS=${ASYNC_SECONDS} BENCH_ASYNC_RATE=${ASYNC_RATE})`);
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
