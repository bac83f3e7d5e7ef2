import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario, slowDoublingScenario } from '../support/scenario-fixtures.js';
import { freePort } from '../support/private-redis.js';
import {
  httpRequest,
  startServiceProcess,
  stopAll,
  waitUntilListening,
  type ServiceProcess,
} from '../support/service-process.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { allStoredRecords } from '../records/stored-records.js';
import { waitFor } from '../execution/support.js';
import { applyTestEnvironment } from '../support/test-environment.js';

/**
 * Issue 27, problem 8, end to end: decision records = runs across a 20 s MySQL outage. An API process
 * (RUN_WORKER=false) and a worker process reach MySQL through a TCP proxy that the test cuts and
 * restores (the shared MariaDB is never touched). During the outage the API answers sync scores from
 * its stale caches and buffers their records; a batch and async runs are in flight on the worker.
 * After MySQL returns, every sync run answered 200 has exactly one record, and so has every stored
 * run: none dropped, none doubled.
 */
const OUTAGE_MS = 20_000;
const ELEMENTS = 400;
const CHUNK = 50;
const ASYNC_RUNS = 12;

let t: TestApp;
let alice: TestUser;
let proxy: TcpProxy;
let port: number;
const processes: ServiceProcess[] = [];
const scenarioIds: Record<string, number> = {};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const headers = () => ({ 'Score-Token': alice.scoreToken });
const score = (a: number) =>
  httpRequest(port, 'POST', '/api/scenario/code/remote/score?name=double', {
    headers: headers(),
    body: { a },
    timeoutMs: 5000,
  });
const submitAsync = (requestId: string, a: number) =>
  httpRequest(port, 'POST', '/api/scenario/code/scoreasync/slow', {
    headers: { ...headers(), 'X-SCE-RequestId': requestId },
    body: { a },
  });
const submitBatch = (parameters: unknown[]) =>
  httpRequest(port, 'POST', '/api/batch/score', { headers: headers(), body: { scenarioName: 'slow', parameters } });
const batchStatus = (batchId: string) => httpRequest(port, 'GET', `/api/batch/${batchId}`, { headers: headers() });

/** How many records each id has among the scenario's stored records. */
async function recordCounts(scenario: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const record of await allStoredRecords(t.services.db, scenarioIds[scenario]))
    counts.set(record.id, (counts.get(record.id) ?? 0) + 1);
  return counts;
}

beforeAll(async () => {
  applyTestEnvironment();
  const databaseUrl = new URL(process.env.DATABASE_URL as string);
  proxy = new TcpProxy(databaseUrl.hostname, Number(databaseUrl.port || 3306));
  await proxy.start();
  t = await createTestApp();
  alice = await t.newUser();
  for (const [name, document] of [
    ['double', doublingScenario()],
    ['slow', slowDoublingScenario(400_000)],
  ] as const) {
    await deployScenario(t.services.db, alice.id, name, document);
    scenarioIds[name] = (
      (await t.services.db('scenarios').where({ owner_id: alice.id, name }).first('id')) as { id: number }
    ).id;
  }
  port = await freePort();
  const env = {
    DATABASE_URL: proxy.rewrite(databaseUrl.toString()),
    JOBS_KEY_PREFIX: `scoring:test:records-outage:${randomUUID().slice(0, 8)}:`,
    PORT: String(port),
    RUN_WORKER: 'false',
    JOB_LOCK_LIFETIME_MS: '3000',
    JOB_POLL_MS: '500',
    BATCH_CHUNK_SIZE: String(CHUNK),
    WORKER_CHUNK_CONCURRENCY: '2',
  };
  const api = startServiceProcess('src/main.ts', env);
  const worker = startServiceProcess('src/worker.ts', env);
  processes.push(api, worker);
  await waitUntilListening(api, port);
}, 60_000);

afterAll(async () => {
  await stopAll(processes);
  await proxy?.close();
  await t?.close();
});

describe('decision records across a 20 s MySQL outage', () => {
  it('writes the sync records buffered during the outage on recovery, and records every stored run exactly once', async () => {
    // The API's caches (token, deployed version, recording settings) hold alice's scenario.
    expect((await score(1)).status).toBe(200);
    const submitted = await submitBatch(Array.from({ length: ELEMENTS }, (_, a) => ({ a })));
    expect(submitted.status).toBe(202);
    const batchId: string = submitted.body.batchTaskId;
    const requestIds = Array.from({ length: ASYNC_RUNS }, (_, k) => `outage-${k}-${randomUUID()}`);
    for (const [k, requestId] of requestIds.entries()) expect((await submitAsync(requestId, k)).status).toBe(202);
    await waitFor(
      async () => {
        const [row] = (await t.services.db('run_results').where({ batch_id: batchId }).count({ n: '*' })) as Array<{
          n: number | string;
        }>;
        return Number(row.n) >= CHUNK ? true : undefined;
      },
      30_000,
      20,
    );

    await proxy.cut();
    const cutAt = Date.now();
    const syncRunIds: string[] = [];
    for (let a = 0; Date.now() - cutAt < OUTAGE_MS; a += 1) {
      const answer = await score(a).catch(() => undefined);
      // A score in flight at the cut may get 503: only runs answered 200 are counted.
      if (answer?.status === 200) syncRunIds.push(String(answer.headers['x-sce-runid']));
      await sleep(50);
    }
    // Answered from stale caches (SCORE_TOKEN_STALE_SECONDS and SCENARIO_CACHE_STALE_SECONDS: 60 s).
    expect(syncRunIds.length).toBeGreaterThan(100);
    await proxy.restore();

    const status = await waitFor(
      async () => {
        const answer = await batchStatus(batchId);
        return answer.status === 200 && answer.body.state === 'FINISHED' ? answer.body : undefined;
      },
      60_000,
      200,
    );
    expect(status).toMatchObject({ total: ELEMENTS, completed: ELEMENTS });
    const asyncIds = await waitFor(
      async () => {
        const rows = (await t.services
          .db('run_results')
          .where({ user_id: alice.id })
          .whereIn('request_id', requestIds)
          .whereIn('state', ['SUCCEEDED', 'FAILED'])
          .select('id')) as Array<{ id: string }>;
        return rows.length === ASYNC_RUNS ? rows.map((row) => row.id) : undefined;
      },
      30_000,
      200,
    );

    // Sync records held by the API through the outage are stored within seconds of MySQL's return.
    const syncCounts = await waitFor(
      async () => {
        const counts = await recordCounts('double');
        return syncRunIds.every((id) => counts.has(id)) ? counts : undefined;
      },
      20_000,
      250,
    );
    expect(syncRunIds.filter((id) => syncCounts.get(id) !== 1)).toEqual([]);

    // Stored runs: one record per stored outcome, the ids of the results, nothing else under the batch.
    const slowCounts = await recordCounts('slow');
    const resultIds: string[] = status.resultsIds;
    expect(new Set(resultIds).size).toBe(ELEMENTS);
    expect(resultIds.filter((id) => slowCounts.get(id) !== 1)).toEqual([]);
    expect(asyncIds.filter((id) => slowCounts.get(id) !== 1)).toEqual([]);
    const batchRecords = (await allStoredRecords(t.services.db, scenarioIds.slow)).filter(
      (record) => record.batchId === batchId,
    );
    expect(batchRecords).toHaveLength(ELEMENTS);
    expect(processes.every((service) => service.alive())).toBe(true);
  }, 150_000);
});
