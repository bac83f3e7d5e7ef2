/**
 * Internal-data benchmark: CSV upload through the HTTP API vs MariaDB `LOAD DATA LOCAL INFILE`, then
 * keyed lookups through a scenario (DATA_LOOKUP node) on the loaded collection.
 *
 *   npm run bench:load -- [--rows=1000000] [--lookups=20000] [--insert] [--rows-per-insert=2000] [--parallelism=2] [--sweep]
 *
 * Uploads take the service's fast path (LOAD DATA LOCAL INFILE fed from its own stream) when the server
 * has local_infile ON; `--insert` forces the multi-row INSERT fallback, which `--rows-per-insert`,
 * `--parallelism` and `--sweep` (which implies `--insert`) tune.
 *
 * The service runs in a child process (this file with `--serve`) so its peak RSS (VmHWM) is its own.
 * Database: BENCH_DATABASE_URL (default mysql://root@127.0.0.1:3306/scoring_bench), created and migrated here.
 * `--sweep` loads the file once per rows-per-insert × parallelism combination (and skips the rest).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream, createReadStream, openAsBlob, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { createApp } from '../../src/app.js';
import { issueAccessToken } from '../../src/auth/access-token.js';
import { UserService } from '../../src/auth/user-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { loadConfig } from '../../src/config/config.js';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../../src/db/database.js';
import { ScenarioEngine, normalizeScenarioDocument, type EnginePorts } from '../../src/engine/index.js';
import { appDependencies } from '../../src/handler-map.js';
import { CollectionLookupPort } from '../../src/internal-data/collection-lookup-port.js';
import { DEFAULT_INSERT_TUNING, type InsertTuning } from '../../src/internal-data/csv-inserter.js';
import { InternalDataService } from '../../src/internal-data/internal-data-service.js';
import { InternalDataStore } from '../../src/internal-data/internal-data-store.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/services.js';

const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_bench';

function flag(name: string, fallback: number): number {
  const found = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return found ? Number(found.split('=')[1]) : fallback;
}

function benchEnvironment(): void {
  process.env.APP_ENV = 'local';
  process.env.DATABASE_URL = BENCH_DATABASE_URL;
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn';
}

// ─── child: the service ──────────────────────────────────────────────────────────────────────────

async function serve(): Promise<void> {
  benchEnvironment();
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const services = await createServices(config, logger);
  const tuning: InsertTuning = {
    ...DEFAULT_INSERT_TUNING,
    rowsPerInsert: flag('rows-per-insert', DEFAULT_INSERT_TUNING.rowsPerInsert),
    parallelism: flag('parallelism', DEFAULT_INSERT_TUNING.parallelism),
    localInfile: !process.argv.includes('--insert'),
  };
  // The same wiring as services.ts, with the tuning under test.
  const store = new InternalDataStore(services.db, new UserStore(services.db));
  services.internalData = new InternalDataService(store, services.collectionLookups, logger, tuning);
  // Uploads through Express alone, as this benchmark has always measured them (the fast lane serves none of them).
  const app = createApp({ ...appDependencies(services), fastLane: undefined });
  // The measuring parent holds the IPC channel: when it ends, however it ends, so does this service.
  process.on('disconnect', () => process.exit(0));
  const server: Server = createServer(app).listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port });
  });
}

// ─── parent: the measurements ────────────────────────────────────────────────────────────────────

const SEGMENTS = ['gold', 'silver', 'basic', 'premium, plus', 'new'];
const CITIES = ['Berlin', 'Paris', 'Madrid', 'Roma', 'Lisboa', 'Wien', 'Praha', 'Warszawa'];

/** 8 columns: id, age (int), score, balance (double), name, city, segment (string, some quoted), active (boolean). */
async function generateCsv(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  const write = (text: string) =>
    new Promise<void>((resolve) => {
      if (out.write(text)) resolve();
      else out.once('drain', resolve);
    });
  await write('id,age,score,balance,name,city,segment,active\n');
  let buffer = '';
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let id = 1; id <= rows; id += 1) {
    const segment = SEGMENTS[id % SEGMENTS.length];
    buffer += `${id},${18 + Math.floor(random() * 70)},${(random() * 1000).toFixed(3)},${(random() * 1e6 - 2e5).toFixed(2)},customer_${id.toString(36)},${CITIES[id % CITIES.length]},${segment.includes(',') ? `"${segment}"` : segment},${random() < 0.5}\n`;
    if (buffer.length > 1 << 20) {
      await write(buffer);
      buffer = '';
    }
  }
  await write(buffer);
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

function startService(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', ...args], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }));
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
}

function procStatus(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(0)} MB`;
const rate = (rows: number, ms: number) => Math.round(rows / (ms / 1000));

async function uploadOnce(
  csvPath: string,
  rows: number,
  tuning: { rowsPerInsert: number; parallelism: number },
  collection: string,
  token: string,
  indexes?: string,
) {
  const { child, port } = await startService([
    `--rows-per-insert=${tuning.rowsPerInsert}`,
    `--parallelism=${tuning.parallelism}`,
    ...(insertPath ? ['--insert'] : []),
  ]);
  try {
    const pid = child.pid as number;
    const idleRss = procStatus(pid, 'VmRSS');
    const form = new FormData();
    form.append('file', await openAsBlob(csvPath), 'bench.csv');
    const url = new URL(`http://127.0.0.1:${port}/api/internaldata/collections/loadData/${collection}`);
    url.searchParams.set('fileName', 'bench.csv');
    if (indexes) url.searchParams.set('indexes', indexes);
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', body: form, headers: { Authorization: `Bearer ${token}` } });
    const body = (await response.json()) as { rowsLoaded?: number; message?: string };
    const ms = performance.now() - started;
    if (response.status !== 201 || body.rowsLoaded !== rows)
      throw new Error(`upload answered ${response.status}: ${JSON.stringify(body)}`);
    return { ms, rate: rate(rows, ms), peakRss: procStatus(pid, 'VmHWM'), idleRss };
  } finally {
    child.kill('SIGKILL');
  }
}

async function loadDataInfile(csvPath: string, rows: number): Promise<number> {
  const connection = await mysql.createConnection({
    uri: BENCH_DATABASE_URL,
    infileStreamFactory: () => createReadStream(csvPath),
  } as mysql.ConnectionOptions);
  try {
    await connection.query('DROP TABLE IF EXISTS bench_load_data');
    await connection.query(
      'CREATE TABLE bench_load_data (id BIGINT, age BIGINT, score DOUBLE, balance DOUBLE, name VARCHAR(255), city VARCHAR(255), segment VARCHAR(255), active VARCHAR(5)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin',
    );
    const started = performance.now();
    const [result] = await connection.query(
      `LOAD DATA LOCAL INFILE 'bench.csv' INTO TABLE bench_load_data FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\\n' IGNORE 1 LINES`,
    );
    const ms = performance.now() - started;
    const affected = (result as { affectedRows: number }).affectedRows;
    if (affected !== rows) throw new Error(`LOAD DATA loaded ${affected} rows`);
    await connection.query('DROP TABLE bench_load_data');
    return ms;
  } finally {
    await connection.end();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function measureLookups(ownerId: number, collection: string, rows: number, count: number) {
  const db = createDatabase(BENCH_DATABASE_URL, { min: 2, max: 10 });
  const port = new CollectionLookupPort(new InternalDataStore(db, new UserStore(db)));
  const ports: EnginePorts = {
    lookups: port,
    scenarios: { resolveDeployed: async () => null },
    http: {
      request: async () => {
        throw new Error('no http in this benchmark');
      },
    },
  };
  const engine = new ScenarioEngine({ ports });
  const document = normalizeScenarioDocument({
    content: {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'find', type: 'DATA_LOOKUP' },
        { id: 'score', type: 'SCRIPT' },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { from: 'start', to: 'find' },
        { from: 'find', to: 'score' },
        { from: 'score', to: 'end' },
      ],
    },
    nodeProperties: {
      start: {
        id: 'start',
        type: 'START',
        content: { inputs: [{ name: 'customerId', type: { type: 'INTEGER' }, required: true }] },
      },
      find: {
        id: 'find',
        type: 'DATA_LOOKUP',
        content: {
          collection,
          keyColumn: 'id',
          joinVariable: 'customerId',
          mode: 'ONE',
          output: 'customer',
          columns: ['age', 'balance', 'segment', 'active'],
        },
      },
      score: {
        id: 'score',
        type: 'SCRIPT',
        content: {
          language: 'javascript',
          code: 'approved = customer !== null && customer.active && customer.balance > 0;',
          outputs: ['approved'],
        },
      },
      end: { id: 'end', type: 'END', content: {} },
    },
  });
  try {
    const diagnostics = await engine.diagnose(document, { ownerId });
    if (diagnostics.length > 0) throw new Error(`scenario diagnostics: ${JSON.stringify(diagnostics)}`);
    const compiled = engine.compile('bench-lookup', document);
    const keyAt = (n: number) => 1 + ((n * 7919) % rows);
    const timeIt = async (run: (key: number) => Promise<unknown>) => {
      for (let n = 0; n < 2000; n += 1) await run(keyAt(n)); // warm-up
      const latencies: number[] = [];
      for (let n = 0; n < count; n += 1) {
        const started = performance.now();
        await run(keyAt(n + 5000));
        latencies.push(performance.now() - started);
      }
      latencies.sort((a, b) => a - b);
      return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
    };
    const portOnly = await timeIt((key) =>
      port.lookup({
        ownerId,
        collection,
        keyColumn: 'id',
        key,
        columns: ['age', 'balance', 'segment', 'active'],
        mode: 'ONE',
      }),
    );
    const scenarioRun = await timeIt((key) => engine.run(compiled, { customerId: key }, { ownerId }));
    const noLookup = engine.compile(
      'bench-no-lookup',
      normalizeScenarioDocument({
        content: {
          nodes: [
            { id: 'start', type: 'START' },
            { id: 'score', type: 'SCRIPT' },
            { id: 'end', type: 'END' },
          ],
          edges: [
            { from: 'start', to: 'score' },
            { from: 'score', to: 'end' },
          ],
        },
        nodeProperties: {
          start: {
            id: 'start',
            type: 'START',
            content: { inputs: [{ name: 'customerId', type: { type: 'INTEGER' }, required: true }] },
          },
          score: {
            id: 'score',
            type: 'SCRIPT',
            content: { language: 'javascript', code: 'approved = customerId > 0;', outputs: ['approved'] },
          },
          end: { id: 'end', type: 'END', content: {} },
        },
      }),
    );
    const baseline = await timeIt((key) => engine.run(noLookup, { customerId: key }, { ownerId }));
    return { portOnly, scenarioRun, baseline };
  } finally {
    await engine.dispose();
    await db.destroy();
  }
}

/** `--insert`: the service loads with multi-row INSERTs (its fallback) instead of LOAD DATA LOCAL INFILE. */
const insertPath = process.argv.includes('--insert') || process.argv.includes('--sweep');

async function main(): Promise<void> {
  benchEnvironment();
  const rows = flag('rows', 1_000_000);
  const lookups = flag('lookups', 20_000);
  const tuning = {
    rowsPerInsert: flag('rows-per-insert', DEFAULT_INSERT_TUNING.rowsPerInsert),
    parallelism: flag('parallelism', DEFAULT_INSERT_TUNING.parallelism),
  };
  const sweep = process.argv.includes('--sweep');
  const path = insertPath
    ? `${tuning.rowsPerInsert} rows/INSERT × ${tuning.parallelism}`
    : 'LOAD DATA LOCAL INFILE path';

  await ensureDatabaseExists(BENCH_DATABASE_URL);
  const db = createDatabase(BENCH_DATABASE_URL, { min: 0, max: 2 });
  await migrateToLatest(db);
  const config = loadConfig();
  const user = await new UserService(new UserStore(db), { scoreTokenCacheMs: 0 }).ensureUser('bench-load', false);
  const token = issueAccessToken(config.jwt, user.username, false);
  const internalData = new InternalDataService(
    new InternalDataStore(db, new UserStore(db)),
    { invalidate: () => undefined },
    createLogger('silent'),
  );
  const dropIfThere = async (name: string) => {
    await internalData.delete(user.id, name).catch(() => undefined);
  };

  const dir = await mkdtemp(join(tmpdir(), 'bench-load-'));
  const csvPath = join(dir, 'bench.csv');
  try {
    let started = performance.now();
    await generateCsv(csvPath, rows);
    console.log(
      `generated ${rows.toLocaleString('en')} rows × 8 columns, ${mb(statSync(csvPath).size)}, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    const infileMs = await loadDataInfile(csvPath, rows);
    const infileRate = rate(rows, infileMs);
    console.log(
      `LOAD DATA LOCAL INFILE (unindexed table): ${(infileMs / 1000).toFixed(2)} s, ${infileRate.toLocaleString('en')} rows/s`,
    );

    const combos = sweep
      ? [500, 2000, 5000].flatMap((rowsPerInsert) => [1, 2, 3].map((parallelism) => ({ rowsPerInsert, parallelism })))
      : [tuning];
    for (const combo of combos) {
      await dropIfThere('bench_plain');
      const result = await uploadOnce(csvPath, rows, combo, 'bench_plain', token);
      console.log(
        `upload, no index, ${sweep || insertPath ? `${combo.rowsPerInsert} rows/INSERT × ${combo.parallelism}` : path}: ${(result.ms / 1000).toFixed(2)} s, ${result.rate.toLocaleString('en')} rows/s = ${((result.rate / infileRate) * 100).toFixed(0)}% of LOAD DATA; service peak RSS ${mb(result.peakRss)} (idle ${mb(result.idleRss)})`,
      );
    }
    await dropIfThere('bench_plain');
    if (sweep) return;

    await dropIfThere('bench_keyed');
    started = performance.now();
    const keyed = await uploadOnce(csvPath, rows, tuning, 'bench_keyed', token, 'id,true');
    console.log(
      `upload, UNIQUE index on id (${path}): ${(keyed.ms / 1000).toFixed(2)} s, ${keyed.rate.toLocaleString('en')} rows/s = ${((keyed.rate / infileRate) * 100).toFixed(0)}% of LOAD DATA; service peak RSS ${mb(keyed.peakRss)}`,
    );

    const latency = await measureLookups(user.id, 'bench_keyed', rows, lookups);
    const fmt = (value: number) => `${(value * 1000).toFixed(0)} µs`;
    console.log(
      `keyed lookup, port only (${lookups.toLocaleString('en')} sequential): p50 ${fmt(latency.portOnly.p50)}, p99 ${fmt(latency.portOnly.p99)}`,
    );
    console.log(
      `scenario with a DATA_LOOKUP node, whole run: p50 ${fmt(latency.scenarioRun.p50)}, p99 ${fmt(latency.scenarioRun.p99)}`,
    );
    console.log(
      `same scenario without the lookup (baseline): p50 ${fmt(latency.baseline.p50)}, p99 ${fmt(latency.baseline.p99)}`,
    );
    await dropIfThere('bench_keyed');
  } finally {
    await rm(dir, { recursive: true, force: true });
    await db.destroy();
  }
}

if (process.argv.includes('--serve')) {
  serve().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
