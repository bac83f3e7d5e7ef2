/**
 * Replay benchmark (`npm run bench:replay`): how fast a replay runs against how fast a batch runs, in
 * one process and one run (issue 13 §4: "at least at the batch rate").
 *
 *   1. seeds BENCH_REPLAY_RECORDS (default 100,000) decision records of the reference credit decision
 *      (scripts/bench/reference-scenario.ts): each application's inputs and what version 1 decided,
 *      written through the records store (bulk inserts), as a worker records batch elements;
 *   2. a batch of BENCH_BATCH_ELEMENTS (default 10,000) of the same decision, submit to last result
 *      (the baseline; recording is off for its scenario, as the execution-core benchmark ran);
 *   3. a replay of every record with a candidate whose scorecard base score is 20 points higher (so
 *      decisions move across the cut-offs), start to FINISHED, comparing decision, tier and score.
 *
 * It prints both rates, their ratio and the transition matrix of `decision`. The process is an API
 * process with its in-process worker (`npm start`): the same engine pool, job store and database
 * serve the batch and the replay. Database: BENCH_DATABASE_URL (default
 * mysql://root@127.0.0.1:3306/scoring_bench_replay, created and migrated here); job store:
 * BENCH_JOBS_URL (default redis://127.0.0.1:6379/2) under a key prefix of its own. What it creates is
 * deleted at the end. The machine must be otherwise idle for the figures to mean anything.
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config/config.js';
import { ensureDatabaseExists, migrateToLatest } from '../../src/db/database.js';
import { mapWithConcurrency } from '../../src/execution/map-with-concurrency.js';
import { createLogger } from '../../src/logger.js';
import type { DecisionRecord } from '../../src/records/decision-record.js';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';
import { closeServices, createServices, startWorkerRole, type Services } from '../../src/services.js';
import { referenceScenario, sampleInputs } from './reference-scenario.js';

const RECORDS = Number(process.env.BENCH_REPLAY_RECORDS ?? 100_000);
const BATCH_ELEMENTS = Number(process.env.BENCH_BATCH_ELEMENTS ?? 10_000);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_bench_replay';
const JOBS_URL = process.env.BENCH_JOBS_URL ?? 'redis://127.0.0.1:6379/2';
/** Points added to the candidate's base score. */
const CANDIDATE_SHIFT = 20;

const fixed = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function deploy(
  services: Services,
  ownerId: number,
  name: string,
  variant: number,
  develop?: number,
): Promise<number> {
  const [id] = await services.db('scenarios').insert({ owner_id: ownerId, name, next_version: 2 });
  const version = (doc: ReturnType<typeof referenceScenario>) => ({
    content: doc.content,
    node_properties: JSON.stringify(doc.nodeProperties),
  });
  await services.db('scenario_versions').insert({
    scenario_id: id,
    status: 'DEPLOYED',
    version_number: 1,
    source_version: 'develop',
    ...version(referenceScenario(variant)),
  });
  if (develop !== undefined)
    await services.db('scenario_versions').insert({
      scenario_id: id,
      status: 'DEVELOP',
      version_number: null,
      source_version: 'develop',
      ...version(referenceScenario(develop)),
    });
  return Number(id);
}

/** Decision records as a worker would have recorded them: version 1's outcome on each application. */
async function seedRecords(services: Services, owner: { id: number }, scenarioId: number): Promise<void> {
  const deployed = await services.deployedScenarios.require(owner.id, 'credit');
  const compiled = services.engine.compile(deployed.cacheKey, deployed.document);
  const store = new MySqlDecisionRecordStore(services.db);
  const inputs = sampleInputs(RECORDS, 7).map((input, k) => ({ input, k }));
  // One record a millisecond, the newest a minute ago (records a worker writes have distinct times, a few a millisecond at most).
  const started = Date.now() - 60_000 - RECORDS;
  const slice = 5000;
  for (let from = 0; from < RECORDS; from += slice) {
    const records = await mapWithConcurrency(
      inputs.slice(from, from + slice),
      256,
      async ({ input, k }): Promise<DecisionRecord> => {
        const id = randomUUID();
        const at = new Date(started + k);
        const outcome = await services.engine.run(compiled, input as unknown as Record<string, unknown>, {
          ownerId: owner.id,
        });
        return {
          id,
          ownerId: owner.id,
          scenarioId,
          scenarioName: 'credit',
          version: '1',
          versionId: deployed.versionId,
          mode: 'BATCH',
          requesterId: owner.id,
          requestId: id,
          batchId: null,
          state: 'SUCCEEDED',
          inputs: input as unknown as Record<string, unknown>,
          maskedInputs: [],
          result: outcome.result,
          error: null,
          beganAt: at,
          endedAt: at,
          durationMicros: 50,
          trace: null,
          captures: [],
        };
      },
    );
    await store.insertMany(records);
  }
}

async function runBatch(services: Services, ownerId: number, count: number): Promise<number> {
  const inputs = sampleInputs(count, 11) as unknown as Record<string, unknown>[];
  const started = performance.now();
  const batchId = await services.execution.batches.submit({ id: ownerId }, 'credit-batch', inputs);
  for (;;) {
    const status = await services.execution.batches.status({ id: ownerId }, batchId);
    if (status.state === 'FINISHED') {
      if (status.failed > 0) throw new Error(`the batch had ${status.failed} failed elements`);
      return performance.now() - started;
    }
    await sleep(10);
  }
}

async function runReplay(
  services: Services,
  owner: { id: number; username: string },
  scenarioId: number,
  limit: number,
) {
  const started = performance.now();
  const { replayId } = await services.replay.service.start({ owner, isAdmin: false }, owner.id, String(scenarioId), {
    candidateVersion: 'develop',
    outputs: ['decision', 'tier', 'score'],
    limit,
  });
  for (;;) {
    const replay = await services.replay.service.get({ owner, isAdmin: false }, String(scenarioId), replayId);
    if (replay.state === 'FINISHED' || replay.state === 'FAILED') {
      if (replay.state === 'FAILED') throw new Error(`the replay failed: ${replay.error}`);
      return { replay, ms: performance.now() - started };
    }
    await sleep(20);
  }
}

async function main(): Promise<void> {
  Object.assign(process.env, {
    APP_ENV: 'local',
    DATABASE_URL,
    JOBS_URL,
    JOBS_KEY_PREFIX: `scoring:bench-replay:${randomUUID().slice(0, 8)}:`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    LIMIT_BATCH_ELEMENTS: String(Math.max(BATCH_ELEMENTS, 100_000)),
    REPLAY_MAX_RECORDS: String(Math.min(Math.max(RECORDS, 1000), 100_000)),
  });
  await ensureDatabaseExists(DATABASE_URL);
  const config = loadConfig();
  const services = await createServices(config, createLogger(config.logLevel));
  await migrateToLatest(services.db);
  const username = `bench-replay-${randomUUID().slice(0, 8)}`;
  const user = await services.users.ensureUser(username, false);
  const owner = { id: user.id, username };
  const scenarioId = await deploy(services, owner.id, 'credit', 0, CANDIDATE_SHIFT);
  const batchScenarioId = await deploy(services, owner.id, 'credit-batch', 0);
  // The baseline batch runs as the execution-core benchmark measured it: without recording.
  await services
    .db('recording_settings')
    .insert({ scenario_id: batchScenarioId, enabled: false, retention_days: 1, sync_sample_rate: 0, trace: false });
  try {
    const seeding = performance.now();
    await seedRecords(services, owner, scenarioId);
    console.log(`seeded ${fixed(RECORDS)} decision records in ${fixed((performance.now() - seeding) / 1000, 1)} s`);
    await startWorkerRole(services);

    await runBatch(services, owner.id, 200); // warm-up: compilation, connections
    const batchMs = await runBatch(services, owner.id, BATCH_ELEMENTS);
    const batchRate = (BATCH_ELEMENTS * 1000) / batchMs;
    console.log(
      `batch of ${fixed(BATCH_ELEMENTS)}: submit to last result ${fixed(batchMs)} ms = ${fixed(batchRate)} elements/s`,
    );

    await runReplay(services, owner, scenarioId, 1000); // warm-up
    const rssBefore = process.memoryUsage().rss;
    const { replay, ms } = await runReplay(services, owner, scenarioId, RECORDS);
    const rssAfter = process.memoryUsage().rss;
    const report = replay.report!;
    const replayRate = (report.replayed * 1000) / ms;
    const jobMs = Date.parse(replay.finishedAt!) - Date.parse(replay.startedAt!);
    console.log(
      `replay of ${fixed(report.replayed)} records: start to FINISHED ${fixed(ms)} ms = ${fixed(replayRate)} records/s (the job itself ${fixed(jobMs)} ms = ${fixed((report.replayed * 1000) / jobMs)} records/s)`,
    );
    console.log(
      `  changed ${fixed(report.changed)}, failed ${fixed(replay.failed)}; RSS ${fixed(rssBefore / 2 ** 20)} MB before, ${fixed(rssAfter / 2 ** 20)} MB after`,
    );
    const decision = report.outputs[0];
    console.log(
      `  decision: ${decision.transitions.map((pair) => `${String(pair.from)}→${String(pair.to)} ${fixed(pair.count)}`).join(', ')}`,
    );
    const score = report.outputs[2].differences;
    if (score)
      console.log(
        `  score difference: mean ${fixed(score.mean, 1)}, p5 ${score.p5}, p50 ${score.p50}, p95 ${score.p95}`,
      );
    const ratio = replayRate / batchRate;
    console.log(
      `\nreplay ÷ batch rate: ${fixed(ratio, 2)}×   goal: replay ≥ batch rate — ${ratio >= 1 ? 'met' : 'NOT met'}`,
    );
    console.log(
      `run: npm run bench:replay   (BENCH_REPLAY_RECORDS=${RECORDS} BENCH_BATCH_ELEMENTS=${BATCH_ELEMENTS}; figures need an otherwise idle machine)`,
    );
  } finally {
    await services
      .db('replays')
      .whereIn('scenario_id', [scenarioId, batchScenarioId])
      .delete()
      .catch(() => undefined);
    await services
      .db('decision_record_pages')
      .whereIn('scenario_id', [scenarioId, batchScenarioId])
      .delete()
      .catch(() => undefined);
    await services
      .db('batches')
      .where({ user_id: owner.id })
      .delete()
      .catch(() => undefined);
    await services
      .db('scenarios')
      .whereIn('id', [scenarioId, batchScenarioId])
      .delete()
      .catch(() => undefined);
    await closeServices(services);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
