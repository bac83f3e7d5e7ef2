/**
 * The hot path never waits on MySQL (`npm run bench:mysql-latency`): synchronous scores at a steady, low rate
 * (BENCH_LATENCY_RATE per second, default 90) for BENCH_LATENCY_SECONDS (default 20), against one API process whose
 * MySQL connection goes through a TCP proxy that delays every chunk by BENCH_LATENCY_MS each way (default 100 ms:
 * 200 ms per round trip), and against one talking to MySQL directly (the baseline), in the same run. Latencies are
 * measured from each request's scheduled send time (an open loop). Goal (issue #28): p99 within 1.5 × the
 * baseline's p99, and no request over 200 ms. Uses its own database (`scoring_bench`, BENCH_DATABASE_URL's server).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { UserService } from '../../src/auth/user-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../../src/db/database.js';
import { referenceScenario, sampleInputs } from './reference-scenario.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_bench';
const JOBS_URL = process.env.BENCH_JOBS_URL ?? 'redis://127.0.0.1:6379/2';
const RATE = Number(process.env.BENCH_LATENCY_RATE ?? 90);
const SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 20);
const DELAY_MS = Number(process.env.BENCH_LATENCY_MS ?? 100);

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

/** A TCP proxy in front of `target` that delays every chunk by `delayMs`, each way (order kept). */
function latencyProxy(
  target: { host: string; port: number },
  delayMs: number,
): Promise<{ port: number; close: () => void }> {
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const relay = (from: net.Socket, to: net.Socket) => {
      from.on('data', (chunk) => {
        setTimeout(() => {
          if (!to.destroyed) to.write(chunk);
        }, delayMs);
      });
      from.on('close', () => setTimeout(() => to.destroy(), delayMs));
      from.on('error', () => to.destroy());
    };
    relay(client, upstream);
    relay(upstream, client);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ port: (server.address() as net.AddressInfo).port, close: () => server.close() }),
    ),
  );
}

function send(
  port: number,
  agent: http.Agent,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<number> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function startApi(port: number, databaseUrl: string): Promise<ChildProcess> {
  const api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      APP_ENV: 'local',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      JOBS_URL,
      JOBS_KEY_PREFIX: `scoring:bench:latency:${randomUUID().slice(0, 8)}:`,
      PORT: String(port),
      RUN_WORKER: 'false',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(api);
  for (let i = 0; i < 600; i += 1) {
    const up = await new Promise<boolean>((resolve) =>
      http
        .get({ host: '127.0.0.1', port, path: '/health/live' }, (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        })
        .on('error', () => resolve(false)),
    );
    if (up) return api;
    await sleep(100);
  }
  throw new Error(`the API on port ${port} did not start`);
}

/** Scores at RATE per second for SECONDS, each timed from when it was due. */
async function steadyLoad(
  port: number,
  token: string,
  body: unknown,
): Promise<{ latencies: number[]; errors: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  let errors = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  const total = RATE * SECONDS;
  for (let sent = 0; sent < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * RATE));
    for (; sent < due; sent += 1) {
      const dueAt = started + (sent * 1000) / RATE;
      pending.push(
        send(port, agent, '/api/scenario/code/remote/score?name=credit', { 'score-token': token }, body).then(
          (status) => {
            if (status === 200) latencies.push(performance.now() - dueAt);
            else errors += 1;
          },
          () => {
            errors += 1;
          },
        ),
      );
    }
    await sleep(2);
  }
  await Promise.all(pending);
  agent.destroy();
  return { latencies, errors };
}

async function main(): Promise<void> {
  await ensureDatabaseExists(DATABASE_URL);
  const db = createDatabase(DATABASE_URL, { min: 0, max: 2 });
  await migrateToLatest(db);
  const users = new UserService(new UserStore(db), { scoreTokenCacheMs: 0 });
  const user = await users.ensureUser(`latency-${randomUUID().slice(0, 8)}`, false);
  const token = (await users.issueScoreToken(user.id)) as string;
  const doc = referenceScenario();
  const [scenarioId] = await db('scenarios').insert({ owner_id: user.id, name: 'credit', next_version: 2 });
  await db('scenario_versions').insert({
    scenario_id: scenarioId,
    status: 'DEPLOYED',
    version_number: 1,
    content: doc.content,
    node_properties: JSON.stringify(doc.nodeProperties),
  });
  const body = sampleInputs(1)[0];
  const target = new URL(DATABASE_URL);
  const proxy = await latencyProxy({ host: target.hostname, port: Number(target.port || 3306) }, DELAY_MS);
  const proxied = new URL(DATABASE_URL);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  try {
    const results: Record<string, { latencies: number[]; errors: number }> = {};
    for (const [label, url, port] of [
      ['direct', DATABASE_URL, 18140],
      [`${2 * DELAY_MS} ms per MySQL round trip`, proxied.toString(), 18141],
    ] as const) {
      const api = await startApi(port, url);
      // warm up: the token, the deployed version, the compilation, the engine hosts
      for (let k = 0; k < 20; k += 1)
        await send(
          port,
          new http.Agent(),
          '/api/scenario/code/remote/score?name=credit',
          { 'score-token': token },
          body,
        );
      results[label] = await steadyLoad(port, token, body);
      api.kill('SIGTERM');
      const { latencies, errors } = results[label];
      console.log(
        `${label.padEnd(28)} ${latencies.length} scores at ${RATE}/s: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms, over 200 ms: ${latencies.filter((l) => l > 200).length}, errors ${errors}`,
      );
    }
    const [direct, slow] = Object.values(results);
    const p99 = percentile(slow.latencies, 99);
    const bound = 1.5 * percentile(direct.latencies, 99);
    const max = Math.max(...slow.latencies);
    console.log('\nGoals:');
    console.log(
      `  p99 ${p99.toFixed(1)} ms ≤ 1.5 × direct p99 = ${bound.toFixed(1)} ms: ${p99 <= bound ? 'met' : 'NOT met'}`,
    );
    console.log(
      `  no request over 200 ms (max ${max.toFixed(1)} ms), no error: ${max <= 200 && slow.errors === 0 ? 'met' : 'NOT met'}`,
    );
    console.log(
      `\nrun: npm run bench:mysql-latency   (BENCH_LATENCY_RATE=${RATE} BENCH_LATENCY_SECONDS=${SECONDS} BENCH_LATENCY_MS=${DELAY_MS})`,
    );
  } finally {
    proxy.close();
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await db('scenarios')
      .where({ owner_id: user.id })
      .del()
      .catch(() => undefined);
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
