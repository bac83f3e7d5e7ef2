/**
 * Fairness benchmark (`npm run bench:fairness`): one tenant's runs must not slow another's. Starts one API
 * process (with its in-process worker, as `make run` does) on its own database (`scoring_bench`,
 * BENCH_DATABASE_URL), seeds four users: Alice with the reference credit scenario; Bob and Dave with an endless
 * loop and a memory hog; Mallory with a SCRIPT that grows a Map until V8 aborts the process it runs in. Then,
 * over HTTP:
 *   1. Alice's sync scores alone, at a steady rate (BENCH_FAIRNESS_RATE per second, default 200) for
 *      BENCH_FAIRNESS_SECONDS (default 10): her idle p50/p99;
 *   2. the same during each attack, with /health/live probed every 50 ms:
 *      - Bob scores the endless loop over 4 connections;
 *      - Bob scores the memory hog over 4 connections;
 *      - two looping tenants: Bob submits 16-element batches of the endless loop (a new one when the last
 *        finished) and scores it over 4 connections, and Dave scores it over 4 more;
 *      - Bob validates a scenario whose 5 test cases loop, over 4 connections;
 *      - Mallory scores the Map growth over 2 connections (each kills an engine host);
 *   3. how long one time-limit and one memory-limit failure take, Bob alone on one connection.
 * Prints the figures and whether the goals hold: Alice's p99 ≤ 3 × her idle p99 + 50 ms and no error of hers,
 * /health/live < 100 ms, a limit failure ends within its limit (LIMIT_RUN_TIMEOUT_MS of the service, default
 * 1000) + 100 ms. Latencies are measured from each request's scheduled send time (an open loop), so a stalled
 * service shows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { UserService } from '../../src/auth/user-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { issueAccessToken } from '../../src/auth/access-token.js';
import { loadConfig } from '../../src/config/config.js';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../../src/db/database.js';
import { normalizeScenarioDocument, type ScenarioDocument } from '../../src/engine/index.js';
import { referenceScenario, sampleInputs } from './reference-scenario.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_bench';
const JOBS_URL = process.env.BENCH_JOBS_URL ?? 'redis://127.0.0.1:6379/2';
const API_PORT = Number(process.env.BENCH_API_PORT ?? 18090);
const SECONDS = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_FAIRNESS_RATE ?? 200);
const LIMIT_MS = Number(process.env.LIMIT_RUN_TIMEOUT_MS ?? 1000);
const ATTACK_CONNECTIONS = 4;

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
// One agent per party, so Bob's stalled connections never hold a socket Alice or the probe need.
const agents = {
  alice: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  bob: new http.Agent({ keepAlive: true, maxSockets: ATTACK_CONNECTIONS + 1 }),
  dave: new http.Agent({ keepAlive: true, maxSockets: ATTACK_CONNECTIONS }),
  probe: new http.Agent({ keepAlive: true, maxSockets: 1 }),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const ms = (n: number) => `${n.toFixed(1)} ms`;
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
const describeEnded = (outcome: { ended: number; statuses: Map<number, number> }) =>
  `${outcome.ended} (${[...outcome.statuses].map(([s, n]) => `${n}× ${s}`).join(', ')})`;

function send(
  agent: http.Agent,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; text: string }> {
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
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

function oneScript(code: string): ScenarioDocument {
  return normalizeScenarioDocument({
    content: {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'attack', type: 'SCRIPT' },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { from: 'start', to: 'attack' },
        { from: 'attack', to: 'end' },
      ],
    },
    nodeProperties: {
      start: { id: 'start', type: 'START', content: { inputs: [] } },
      attack: { id: 'attack', type: 'SCRIPT', content: { language: 'javascript', code, outputs: ['out'] } },
    },
  });
}

interface Load {
  latencies: number[];
  errors: number;
}

/** Alice's scores at RATE per second for SECONDS, each timed from when it was due. */
async function aliceLoad(token: string, body: object): Promise<Load> {
  const latencies: number[] = [];
  const timeline: [number, number][] = [];
  let errors = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  const total = RATE * SECONDS;
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * RATE));
    while (sent < due) {
      const dueAt = started + (sent * 1000) / RATE;
      sent += 1;
      pending.push(
        send(agents.alice, 'POST', '/api/scenario/code/remote/score?name=credit', { 'score-token': token }, body)
          .then((res) => {
            if (res.status === 200) {
              latencies.push(performance.now() - dueAt);
              if (process.env.BENCH_TIMELINE) timeline.push([dueAt - started, performance.now() - dueAt]);
            } else errors += 1;
          })
          .catch(() => {
            errors += 1;
          }),
      );
    }
    await sleep(1);
  }
  await Promise.all(pending);
  if (process.env.BENCH_TIMELINE) {
    const buckets = new Map<number, number>();
    for (const [at, lat] of timeline)
      buckets.set(Math.floor(at / 250), Math.max(buckets.get(Math.floor(at / 250)) ?? 0, lat));
    console.log('timeline (max per 250 ms):', [...buckets.values()].map((v) => v.toFixed(0)).join(' '));
  }
  return { latencies, errors };
}

/** One attacker's request, sent over and over on `connections` connections until `stop` resolves. */
async function attack(
  agent: http.Agent,
  connections: number,
  request: () => [string, string, Record<string, string>, unknown],
  stop: Promise<unknown>,
): Promise<{ ended: number; statuses: Map<number, number> }> {
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const statuses = new Map<number, number>();
  let ended = 0;
  const connection = async () => {
    while (!stopped) {
      const [method, path, headers, body] = request();
      const res = await send(agent, method, path, headers, body).catch(() => ({ status: 0, text: '' }));
      ended += 1;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: connections }, connection));
  return { ended, statuses };
}

/** Sync scores of `name` with `token` over ATTACK_CONNECTIONS connections. */
const scoring = (
  agent: http.Agent,
  token: string,
  name: string,
  stop: Promise<unknown>,
  connections = ATTACK_CONNECTIONS,
) =>
  attack(
    agent,
    connections,
    () => ['POST', `/api/scenario/code/remote/score?name=${name}`, { 'score-token': token }, {}],
    stop,
  );

/** 16-element batches of `name`, one after another (the next once the last has finished), until `stop` resolves. */
async function batches(
  agent: http.Agent,
  token: string,
  name: string,
  stop: Promise<unknown>,
): Promise<{ ended: number; statuses: Map<number, number> }> {
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const statuses = new Map<number, number>();
  let ended = 0;
  while (!stopped) {
    const submitted = await send(
      agent,
      'POST',
      '/api/batch/score',
      { 'score-token': token },
      { scenarioName: name, parameters: Array.from({ length: 16 }, () => ({})) },
    ).catch(() => ({ status: 0, text: '' }));
    statuses.set(submitted.status, (statuses.get(submitted.status) ?? 0) + 1);
    if (submitted.status !== 202) {
      await sleep(100);
      continue;
    }
    const id = (JSON.parse(submitted.text) as { batchTaskId: string }).batchTaskId;
    while (!stopped) {
      const status = await send(agent, 'GET', `/api/batch/${id}`, { 'score-token': token }).catch(() => ({
        status: 0,
        text: '{}',
      }));
      if ((JSON.parse(status.text) as { state?: string }).state === 'FINISHED') {
        ended += 16;
        break;
      }
      await sleep(200);
    }
  }
  return { ended, statuses };
}

/** /health/live every 50 ms until `stop` resolves. */
async function probeHealth(stop: Promise<unknown>): Promise<number[]> {
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const latencies: number[] = [];
  while (!stopped) {
    const t0 = performance.now();
    await send(agents.probe, 'GET', '/health/live');
    latencies.push(performance.now() - t0);
    await sleep(50);
  }
  return latencies;
}

async function timeOne(token: string, name: string): Promise<{ ms: number; code: string }> {
  const t0 = performance.now();
  const res = await send(
    agents.bob,
    'POST',
    `/api/scenario/code/remote/score?name=${name}`,
    { 'score-token': token },
    {},
  );
  const took = performance.now() - t0;
  let code = String(res.status);
  try {
    code = (JSON.parse(res.text) as { details?: { code: string }[] }).details?.[0]?.code ?? code;
  } catch {
    /* not JSON */
  }
  return { ms: took, code };
}

async function main(): Promise<void> {
  await ensureDatabaseExists(DATABASE_URL);
  const db = createDatabase(DATABASE_URL, { min: 0, max: 4 });
  await migrateToLatest(db);
  const users = new UserService(new UserStore(db), { scoreTokenCacheMs: 0 });
  const withToken = async (prefix: string) => {
    const created = await users.ensureUser(`${prefix}-${randomUUID().slice(0, 8)}`, false);
    return { ...created, scoreToken: (await users.issueScoreToken(created.id)) as string };
  };
  const alice = await withToken('fair-alice');
  const bob = await withToken('fair-bob');
  const dave = await withToken('fair-dave');
  const mallory = await withToken('fair-mallory');
  const deploy = async (
    ownerId: number,
    name: string,
    doc: ScenarioDocument,
    status: 'DEPLOYED' | 'DEVELOP' = 'DEPLOYED',
  ) => {
    const [id] = await db('scenarios').insert({ owner_id: ownerId, name, next_version: 2 });
    await db('scenario_versions').insert({
      scenario_id: id,
      status,
      version_number: status === 'DEPLOYED' ? 1 : null,
      content: doc.content,
      node_properties: JSON.stringify(doc.nodeProperties),
    });
    return id as number;
  };
  const spin = oneScript('while (true) {} out = 1;');
  await deploy(alice.id, 'credit', referenceScenario());
  await deploy(bob.id, 'spin', spin);
  await deploy(dave.id, 'spin', spin);
  await deploy(bob.id, 'hog', oneScript('const keep = []; while (true) keep.push(new Array(1e5).fill(1)); out = 1;'));
  await deploy(
    mallory.id,
    'grow',
    oneScript('const m = new Map(); for (let i = 0; i < 3e6; i++) m.set(i, i); out = m.size;'),
  );
  const looped = await deploy(bob.id, 'looping-tests', spin, 'DEVELOP');
  await db('scenario_test_cases').insert(
    Array.from({ length: 5 }, (_, k) => ({
      scenario_id: looped,
      name: `loops ${k}`,
      variables: '[]',
      expression: 'out === 1',
      position: k,
    })),
  );
  const bobBearer = issueAccessToken(loadConfig({ ...process.env, APP_ENV: 'local' }).jwt, bob.username, false);
  const body = sampleInputs(1)[0];

  try {
    const api = spawn(
      process.execPath,
      [
        ...(process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []),
        '--import',
        'tsx',
        'src/main.ts',
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          NODE_OPTIONS: '',
          APP_ENV: 'local',
          LOG_LEVEL: 'warn',
          DATABASE_URL,
          JOBS_URL,
          JOBS_KEY_PREFIX: `scoring:bench:fair:${randomUUID().slice(0, 8)}:`,
          PORT: String(API_PORT),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    children.push(api);
    for (let i = 0; i < 200; i += 1) {
      if (
        await send(agents.probe, 'GET', '/health/live').then(
          () => true,
          () => false,
        )
      )
        break;
      await sleep(100);
    }
    const check = await send(
      agents.alice,
      'POST',
      '/api/scenario/code/remote/score?name=credit',
      { 'score-token': alice.scoreToken },
      body,
    );
    if (check.status !== 200) throw new Error(`Alice's score answered ${check.status}: ${check.text}`);
    // warm up both tenants' sandboxes
    await aliceLoad(alice.scoreToken, body).then(() => undefined);
    await timeOne(bob.scoreToken, 'spin');

    console.log(
      `Alice: sync scores of the reference credit decision at ${RATE}/s for ${SECONDS} s; Bob: ${ATTACK_CONNECTIONS} connections; run limit ${LIMIT_MS} ms.\n`,
    );
    const idle = await aliceLoad(alice.scoreToken, body);
    const idleP99 = percentile(idle.latencies, 99);
    console.log(
      `idle:              Alice p50 ${ms(percentile(idle.latencies, 50))}, p99 ${ms(idleP99)} (${idle.latencies.length} scores, ${idle.errors} errors)`,
    );
    const threshold = 3 * idleP99 + 50;

    const attacks: [string, (stop: Promise<unknown>) => Promise<string>][] = [
      ['Bob loops', async (stop) => describeEnded(await scoring(agents.bob, bob.scoreToken, 'spin', stop))],
      ['Bob hogs memory', async (stop) => describeEnded(await scoring(agents.bob, bob.scoreToken, 'hog', stop))],
      [
        'Bob and Dave loop',
        async (stop) => {
          const [batch, bobs, daves] = await Promise.all([
            batches(agents.bob, bob.scoreToken, 'spin', stop),
            scoring(agents.bob, bob.scoreToken, 'spin', stop),
            scoring(agents.dave, dave.scoreToken, 'spin', stop),
          ]);
          return `batch elements ${describeEnded(batch)}, Bob's scores ${describeEnded(bobs)}, Dave's ${describeEnded(daves)}`;
        },
      ],
      [
        'Bob validates loops',
        async (stop) =>
          describeEnded(
            await attack(
              agents.bob,
              ATTACK_CONNECTIONS,
              () => ['POST', `/api/scenario/validate/${looped}`, { authorization: `Bearer ${bobBearer}` }, undefined],
              stop,
            ),
          ),
      ],
      [
        'Mallory crashes',
        async (stop) => describeEnded(await scoring(agents.dave, mallory.scoreToken, 'grow', stop, 2)),
      ],
    ];
    const results: [string, boolean][] = [];
    for (const [label, run] of attacks) {
      const load = aliceLoad(alice.scoreToken, body);
      const [loaded, attacker, health] = await Promise.all([load, run(load), probeHealth(load)]);
      const p99 = percentile(loaded.latencies, 99);
      const healthMax = Math.max(...health);
      console.log(
        `${`${label}:`.padEnd(22)} Alice p50 ${ms(percentile(loaded.latencies, 50))}, p99 ${ms(p99)} (${loaded.latencies.length} scores, ${loaded.errors} errors); ` +
          `/health/live p99 ${ms(percentile(health, 99))}, max ${ms(healthMax)}; attacker's requests ended: ${attacker}`,
      );
      results.push([
        `${label}: Alice's p99 ${ms(p99)} ≤ 3 × idle p99 + 50 ms = ${ms(threshold)}, ${loaded.errors} errors`,
        p99 <= threshold && loaded.errors === 0,
      ]);
      results.push([`${label}: /health/live max ${ms(healthMax)} < 100 ms`, healthMax < 100]);
      // the attack's runs still queued or running end before the next measurement
      await sleep(LIMIT_MS * 2 + 500);
    }

    await sleep(500);
    const spin = await timeOne(bob.scoreToken, 'spin');
    const hog = await timeOne(bob.scoreToken, 'hog');
    console.log(
      `\none time-limit failure:   ${ms(spin.ms)} (${spin.code}); one memory-limit failure: ${ms(hog.ms)} (${hog.code}), Bob alone on one connection`,
    );
    results.push([
      `time-limit failure ends in ${ms(spin.ms)} ≤ limit + 100 ms = ${LIMIT_MS + 100} ms`,
      spin.ms <= LIMIT_MS + 100 && spin.code === 'TIME_LIMIT_EXCEEDED',
    ]);
    results.push([
      `memory-limit failure ends in ${ms(hog.ms)} ≤ limit + 100 ms = ${LIMIT_MS + 100} ms`,
      hog.ms <= LIMIT_MS + 100 && /LIMIT_EXCEEDED/.test(hog.code),
    ]);

    console.log('\nGoals:');
    for (const [line, met] of results) console.log(`  ${line.padEnd(80)} ${verdict(met)}`);
    api.kill('SIGTERM');
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await sleep(500);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await db('scenarios')
      .whereIn('owner_id', [alice.id, bob.id, dave.id, mallory.id])
      .del()
      .catch(() => undefined);
    await db.destroy();
    for (const agent of Object.values(agents)) agent.destroy();
  }
  console.log(
    `\nrun: npm run bench:fairness   (BENCH_FAIRNESS_SECONDS=${SECONDS} BENCH_FAIRNESS_RATE=${RATE}; the service's ENGINE_HOSTS, ENGINE_HOSTS_PER_TENANT, LIMIT_RUN_TIMEOUT_MS apply)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
