/**
 * What recording a run costs, per record, measured in one process so that a loaded machine disturbs it
 * less than req/s over HTTP (`npm run bench:http` compares those): run `npm run bench:records`.
 *   1. the hot path: deciding to record (cached settings, sampling), capturing, masking and queuing a
 *      record of the reference credit decision, against an empty loop of the same shape (CPU µs per run);
 *   2. writing: records stored in pages through the DecisionRecorder with MariaDB's bulk protocol (the service's
 *      way on MariaDB) and with multi-row INSERTs (CPU µs of this process per record, wall µs per record), and the database
 *      server's CPU per record when its process can be read (/proc; a shared server's other clients count too).
 * Env: BENCH_RECORDS (default 40,000 per measurement), BENCH_DATABASE_URL (default
 * mysql://root@127.0.0.1:3306/scoring_bench). Its records are deleted at the end.
 */
import pino from 'pino';
import { createDatabase, ensureDatabaseExists, migrateToLatest } from '../../src/db/database.js';
import { MariaDbBulkInserter } from '../../src/db/mariadb-bulk-insert.js';
import { timeOrderedId } from '../../src/ids/time-ordered-id.js';
import { MySqlDecisionRecordStore, type DecisionRecordStoreOptions } from '../../src/records/decision-record-store.js';
import { DecisionRecorder } from '../../src/records/decision-recorder.js';
import { InputMasker } from '../../src/records/input-masking.js';
import { RecordingSettingsService } from '../../src/records/recording-settings-service.js';
import { RecordingSettingsStore } from '../../src/records/recording-settings-store.js';
import type { RunRecording } from '../../src/records/run-recorder.js';
import { ScenarioRunRecorder } from '../../src/records/scenario-run-recorder.js';
import type { DeployedScenario } from '../../src/scenarios/deployed-scenarios.js';
import { databaseServerPids, threadCpuMs, totalCpuMs } from './proc-cpu.js';
import { referenceScenario, sampleInputs } from './reference-scenario.js';

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_bench';
const COUNT = Number(process.env.BENCH_RECORDS ?? 40_000);
/** A scenario id no real scenario has: this benchmark's records are found and deleted by it. */
const SCENARIO_ID = 4_000_000_000 + Math.floor(Math.random() * 1_000_000);

const fixed = (n: number, digits = 1) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** CPU ms of the database server, when this machine runs it and /proc shows it; NaN otherwise. */
function databaseCpuMs(): number {
  const pids = databaseServerPids();
  return pids.length > 0 ? totalCpuMs(pids) : NaN;
}

async function main(): Promise<void> {
  await ensureDatabaseExists(DATABASE_URL);
  const db = createDatabase(DATABASE_URL, { min: 0, max: 4 });
  await migrateToLatest(db);
  const logger = pino({ level: 'warn' });
  const doc = referenceScenario();
  const deployed: DeployedScenario = {
    scenarioId: SCENARIO_ID,
    ownerId: 1,
    ownerName: 'bench',
    name: 'credit',
    versionId: 1,
    version: '1',
    cacheKey: `bench-records:${SCENARIO_ID}`,
    document: doc,
  };
  const inputs = sampleInputs(1000) as unknown as Array<Record<string, unknown>>;
  // A result the size of the reference decision's (its END node returns every variable).
  const results = inputs.map((input) => ({
    ...input,
    decision: 'APPROVE',
    tier: 'A',
    limitFactor: 1,
    score: 612,
    reasonCodes: ['DEBT'],
    dti: 0.31,
    riskBand: 'LOW',
  }));
  try {
    // 1. The hot path, records queued on a recorder that only inserts once told to (flush).
    const queued = new DecisionRecorder(
      new MySqlDecisionRecordStore(db),
      { batchSize: 1000, flushIntervalMs: 3_600_000, maxBuffered: COUNT * 2 },
      logger,
    );
    const runRecorder = new ScenarioRunRecorder(
      new RecordingSettingsService(new RecordingSettingsStore(db)),
      new InputMasker('bench-secret'),
      queued,
    );
    const run = (k: number) => ({
      id: timeOrderedId(),
      mode: 'SYNC' as const,
      requesterId: 1,
      requestId: timeOrderedId(),
      index: k,
    });
    await runRecorder.start(deployed, inputs[0], run(0)); // reads (and caches) the settings
    const emptyStart = process.cpuUsage();
    for (let k = 0; k < COUNT; k += 1) {
      const shape = run(k);
      const began = new Date();
      if (!shape.id || !began) throw new Error('unreachable');
    }
    const empty = cpuMicros(emptyStart) / COUNT;
    const hotStart = process.cpuUsage();
    for (let k = 0; k < COUNT; k += 1) {
      const recording = runRecorder.start(deployed, inputs[k % inputs.length], run(k)) as RunRecording;
      recording.finish({
        result: results[k % results.length],
        error: null,
        beganAt: new Date(),
        endedAt: new Date(),
        durationMicros: 120,
      });
    }
    const hot = cpuMicros(hotStart) / COUNT - empty;
    await queued.close();
    console.log(
      `hot path (settings, sampling, capture, masking, queue): ${fixed(hot, 2)} µs CPU per run (the loop's own ${fixed(empty, 2)} µs taken off)`,
    );

    // 2. Writing, both ways, through the recorder as the service configures it.
    const bulk = new MariaDbBulkInserter(DATABASE_URL, 2);
    const ways: Array<[string, DecisionRecordStoreOptions]> = [
      ["MariaDB's bulk protocol", { bulk }],
      ['multi-row INSERTs', {}],
    ];
    const figures: Record<string, { client: number; server: number }> = {};
    for (const [way, options] of ways) {
      const recorder = new DecisionRecorder(
        new MySqlDecisionRecordStore(db, options),
        { batchSize: 1000, flushIntervalMs: 50, maxBuffered: COUNT * 2 },
        logger,
      );
      const records = Array.from({ length: COUNT }, (_, k) => ({
        id: timeOrderedId(),
        ownerId: 1,
        scenarioId: SCENARIO_ID,
        scenarioName: 'credit',
        version: '1',
        versionId: 1,
        mode: 'SYNC' as const,
        requesterId: 1,
        requestId: timeOrderedId(),
        batchId: null,
        state: 'SUCCEEDED' as const,
        inputs: inputs[k % inputs.length],
        maskedInputs: [],
        result: results[k % results.length],
        error: null,
        beganAt: new Date(),
        endedAt: new Date(),
        durationMicros: 120,
        trace: null,
        captures: [],
      }));
      const started = performance.now();
      const cpu = process.cpuUsage();
      const mainBefore = threadCpuMs(process.pid, process.pid);
      const databaseBefore = databaseCpuMs();
      for (const record of records) recorder.record(record);
      await recorder.close();
      const client = cpuMicros(cpu) / COUNT;
      const main = ((threadCpuMs(process.pid, process.pid) - mainBefore) * 1000) / COUNT;
      const wall = ((performance.now() - started) * 1000) / COUNT;
      const server = ((databaseCpuMs() - databaseBefore) * 1000) / COUNT;
      figures[way] = { client, server };
      console.log(
        `${way.padEnd(24)} ${fixed(client)} µs CPU here per record (${fixed(main)} µs on the main thread), ${Number.isNaN(server) ? 'database CPU not readable' : `${fixed(server)} µs database server CPU`}, ${fixed(wall)} µs wall per record (${fixed(1e6 / wall, 0)} records/s)`,
      );
    }
    await bulk.close();
    const share = (way: string, base: string, side: 'client' | 'server') =>
      `${fixed((100 * figures[way][side]) / figures[base][side])} %`;
    console.log(
      `the bulk protocol costs ${share("MariaDB's bulk protocol", 'multi-row INSERTs', 'server')} of the INSERTs' database CPU per record, ${share("MariaDB's bulk protocol", 'multi-row INSERTs', 'client')} of their CPU here`,
    );
  } finally {
    await db('decision_record_pages').where('scenario_id', SCENARIO_ID).delete();
    await db.destroy();
  }
  console.log(
    `\nrun: npm run bench:records   (BENCH_RECORDS=${COUNT}; a machine loaded by others disturbs these figures less than req/s, but it does)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
