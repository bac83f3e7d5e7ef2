import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { RecordsConfig } from '../config/config.js';
import { MariaDbBulkInserter } from '../db/mariadb-bulk-insert.js';
import type { ScenarioAccess } from '../scenarios/scenario-access.js';
import { MySqlDecisionRecordStore } from './decision-record-store.js';
import { DecisionRecorder, INSERTS_IN_FLIGHT, type DropReason } from './decision-recorder.js';
import { InputMasker } from './input-masking.js';
import { RecordingSettingsService } from './recording-settings-service.js';
import { RecordingSettingsStore } from './recording-settings-store.js';
import { RecordCursorCodec } from './record-cursor.js';
import { PiiErrorMasking, type RunErrorMasking } from './run-error-masking.js';
import { RecordsService } from './records-service.js';
import { RetentionSweeper } from './retention-sweeper.js';
import type { RunRecorder, StoredRunRecords } from './run-recorder.js';
import { StoredRunRecordWriter } from './stored-run-records.js';
import { ScenarioRunRecorder } from './scenario-run-recorder.js';

/** What `services.records` holds. */
export interface Records {
  /** Browse records, read and change recording settings (the HTTP operations). */
  service: RecordsService;
  /** What execution records its runs through. */
  runRecorder: RunRecorder;
  /** What execution writes stored runs' records with, in the transaction of their outcomes. */
  storedRunRecords: StoredRunRecords;
  /** What execution masks stored run errors with (pii inputs' values). */
  errorMasking: RunErrorMasking;
  /** The bulk writer (flush in tests and benchmarks). */
  recorder: DecisionRecorder;
  sweeper: RetentionSweeper;
  /** Starts deleting expired records in the background (worker processes). */
  startSweeper(): void;
  /** Stops the sweeper and stores the buffered records (SIGTERM). */
  close(): Promise<void>;
}

export interface RecordsDependencies {
  config: RecordsConfig;
  logger: Logger;
  db: Knex;
  /** The database `db` reaches: the bulk protocol's connections are opened to it. */
  databaseUrl: string;
  /** The scenarios feature's ownership rule. */
  scenarios: ScenarioAccess;
  /** The recording settings' cache past its 5 s: served stale while read again, at most this long (SCENARIO_CACHE_STALE_SECONDS). */
  settingsCache?: { maxStaleMs: number; onRefreshError?: (error: unknown) => void };
  /** Told of every dropped record (the metrics counter). */
  onDropped?: (count: number, reason: DropReason) => void;
}

export function createRecords(deps: RecordsDependencies): Records {
  const { config, logger, db } = deps;
  // As many connections as the recorder has inserts in flight.
  const bulk = config.bulkProtocol ? new MariaDbBulkInserter(deps.databaseUrl, INSERTS_IN_FLIGHT) : undefined;
  const store = new MySqlDecisionRecordStore(db, { bulk, pageMaxChars: config.pageMaxChars });
  const settingsStore = new RecordingSettingsStore(db);
  const settings = new RecordingSettingsService(settingsStore, deps.settingsCache);
  const recorder = new DecisionRecorder(
    store,
    {
      batchSize: config.batchSize,
      flushIntervalMs: config.flushIntervalMs,
      maxBuffered: config.maxBuffered,
      onDropped: deps.onDropped,
    },
    logger.child({ component: 'decision-recorder' }),
  );
  const sweeper = new RetentionSweeper(
    store,
    settingsStore,
    { everyMs: config.retentionSweepMs },
    logger.child({ component: 'record-retention' }),
  );
  const masker = new InputMasker(config.maskingSecret);
  return {
    service: new RecordsService(deps.scenarios, store, settings, new RecordCursorCodec(config.maskingSecret)),
    runRecorder: new ScenarioRunRecorder(settings, masker, recorder),
    storedRunRecords: new StoredRunRecordWriter(store, recorder, logger.child({ component: 'stored-run-records' })),
    errorMasking: new PiiErrorMasking(masker),
    recorder,
    sweeper,
    startSweeper: () => sweeper.start(),
    async close() {
      sweeper.stop();
      await recorder.close();
      await bulk?.close();
    },
  };
}
