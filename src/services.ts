import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { UserService } from './auth/user-service.js';
import { UserStore } from './auth/user-store.js';
import type { AppConfig } from './config/config.js';
import { createDatabase } from './db/database.js';
// ── internal data ──
import { CollectionLookupPort } from './internal-data/collection-lookup-port.js';
import { InternalDataService } from './internal-data/internal-data-service.js';
import { InternalDataStore } from './internal-data/internal-data-store.js';
import { ScenarioEngine } from './engine/index.js';
import { createOutbound, type Outbound } from './outbound/outbound.js';
import { DeployedScenarioResolver } from './scenarios/deployed-scenario-resolver.js';
import { createExecution, type Execution } from './execution/execution-module.js';
import { pingJobStore } from './execution/job-store.js';
import { runListeners } from './execution/run-listener.js';
import type { HealthChecks } from './http/health-router.js';
import { logEngineEvent } from './engine-event-log.js';
import { createMetrics } from './metrics/create-metrics.js';
import type { Metrics, MetricsExposition } from './metrics/metrics.js';
import { MySqlDecisionRecordStore } from './records/decision-record-store.js';
import { createRecords, type Records } from './records/records-module.js';
import { createReplay, type Replay } from './replay/replay-module.js';
import { ReplayReferenceCheck } from './replay/replay-reference-check.js';
import { MySqlReplayStore } from './replay/replay-store.js';
import { ScenarioService } from './scenarios/scenario-service.js';
import { DeployedModelReferences } from './scenarios/deployed-model-references.js';
import { ModelResolver } from './models/model-documents.js';
import { ModelService } from './models/model-service.js';
import { ModelTester } from './models/model-tester.js';
import { MySqlModelStore } from './models/model-store.js';
import { MySqlScenarioStore } from './scenarios/scenario-store.js';
import { createStatistics, type Statistics } from './statistics/statistics-module.js';
import { createShadows, type Shadows } from './shadows/shadows-module.js';
import type { DeployListener } from './scenarios/deploy-listener.js';
import { YamlBodyParser } from './http/yaml-body-parser.js';
import { migrationProblem, pendingMigrations } from './db/pending-migrations.js';

/**
 * The composition root: every long-lived object of a process, built once here and passed to the
 * features' handler factories. Build order: database → metrics → users → internal data (the
 * engine's lookups) → deployed-scenario resolver (the engine's scenario calls, execution's "latest
 * deployed version") → outbound HTTP (the engine's HTTP calls, execution's callbacks) → engine →
 * scenarios (deploy checks replay references in the replays table) → run statistics → decision
 * records (their ownership rule is the scenarios'; what they drop is counted by metrics) → execution
 * (whose runs metrics and statistics hear of, and records record) → the metrics' scrape-time gauges
 * (read from execution's stores) → replay (reads records, runs versions of scenarios, queues its
 * jobs on execution's queue).
 */
export interface Services {
  config: AppConfig;
  logger: Logger;
  db: Knex;
  users: UserService;
  deployedScenarios: DeployedScenarioResolver;
  // ── internal data ──
  internalData: InternalDataService;
  collectionLookups: CollectionLookupPort;
  // ── outbound HTTP ──
  outbound: Outbound;
  // ── engine ──
  engine: ScenarioEngine;
  // ── scenarios ──
  scenarios: ScenarioService;
  // ── decision records ──
  records: Records;
  // ── execution ──
  execution: Execution;
  // ── metrics and run statistics ──
  /** Counts what happens (a no-op unless METRICS_ENABLED). */
  metrics: Metrics;
  /** What a scrape answers; undefined unless METRICS_ENABLED (main.ts and worker.ts serve it). */
  metricsExposition?: MetricsExposition;
  statistics: Statistics;
  // ── replay ──
  replay: Replay;
  // ── live tests ──
  /** Shadows: versions run beside the live one on live traffic (docs/live-tests.md). */
  shadows: Shadows;
  /** YAML request bodies are parsed on a thread of their own (started by the first one), never on the event loop. */
  yamlParser: YamlBodyParser;
  // ── models ──
  models: ModelService;
  /** testModelVersion: a version scored on sample input, in the engine. */
  modelTester: ModelTester;
  /** Resolves the models of MODEL nodes into documents before they are compiled. */
  modelDocuments: ModelResolver;
}

/** An anchor's uses times the aliases inside it, at most, in a YAML body (the spec's "at most 100 aliases"). */
const YAML_MAX_ALIAS_COUNT = 100;
/** Heap of the YAML parsing thread: a 1 MiB body of the smallest nodes needs about 100 MB of the package's nodes. */
const YAML_PARSE_HEAP_MB = 256;

/** A warning logged at most once per `everyMs` (with how many were not logged since), for errors that repeat per request. */
function throttledWarning(logger: Logger, message: string, everyMs: number): (error: unknown) => void {
  let lastAt = 0;
  let suppressed = 0;
  return (error) => {
    const now = Date.now();
    if (now - lastAt < everyMs) {
      suppressed += 1;
      return;
    }
    logger.warn({ err: error, suppressed }, message);
    lastAt = now;
    suppressed = 0;
  };
}

export async function createServices(config: AppConfig, logger: Logger): Promise<Services> {
  const db = createDatabase(config.databaseUrl);
  const { metrics, exposition: metricsExposition } = createMetrics(config.metrics, logger);
  // Hot-path caches are served stale while they refresh; a refresh that fails (MySQL down) is logged at most every 10 s.
  const onRefreshError = throttledWarning(
    logger,
    'a cached answer could not be read again (MySQL); serving the one in hand within its bound',
    10_000,
  );
  const userStore = new UserStore(db);
  const users = new UserService(userStore, {
    scoreTokenCacheMs: config.scoreTokenCacheSeconds * 1000,
    scoreTokenStaleMs: config.scoreTokenStaleSeconds * 1000,
    onRefreshError,
    callbackSecretsKey: config.callbackSecretsKey,
    callbackSecretOverlapSeconds: config.callbackSecretOverlapSeconds,
  });
  // ── internal data ──
  const internalDataStore = new InternalDataStore(db, userStore);
  const collectionLookups = new CollectionLookupPort(internalDataStore);
  const internalData = new InternalDataService(internalDataStore, collectionLookups, logger);
  // ── models: before the resolver of deployed scenarios, which embeds their models ──
  const modelStore = new MySqlModelStore(db);
  const modelDocuments = new ModelResolver(modelStore);
  const models = new ModelService(modelStore, new DeployedModelReferences(db), config.models);
  const scenarioStore = new MySqlScenarioStore(db, userStore);
  const deployedScenarios = new DeployedScenarioResolver(scenarioStore, modelDocuments, {
    maxStaleMs: config.scenarioCacheStaleSeconds * 1000,
    onRefreshError,
  });
  // ── outbound HTTP ──
  const outbound = createOutbound(config);
  // ── engine ──
  const engine = new ScenarioEngine({
    ports: { lookups: collectionLookups, scenarios: deployedScenarios, http: outbound.client },
    limits: {
      timeoutMs: config.limits.runTimeoutMs,
      memoryMb: config.limits.scriptMemoryMb,
      testCasesBudgetMs: config.limits.testCasesBudgetMs,
    },
    pool: config.engine,
    onEvent: (event) => {
      metrics.engineEvent(event);
      logEngineEvent(logger, event);
    },
  });
  // ── scenarios ──
  const replayStore = new MySqlReplayStore(db, userStore);
  // Deploys end the shadows and split of the champion they replace; the shadows feature, built after scenarios, listens.
  let shadowsOfDeploys: DeployListener | undefined;
  const deployListener: DeployListener = {
    deployed: (scenario, label) => shadowsOfDeploys?.deployed(scenario, label) ?? Promise.resolve(),
  };
  const scenarios = new ScenarioService(
    scenarioStore,
    engine,
    deployedScenarios,
    new ReplayReferenceCheck(replayStore),
    modelDocuments,
    deployListener,
  );
  // ── run statistics ──
  const statistics = createStatistics({
    config: config.statistics,
    logger,
    db,
    scenarios,
    onDropped: (runs) => metrics.statisticsDropped(runs),
  });
  statistics.recorder.start();
  // ── decision records ──
  const records = createRecords({
    config: config.records,
    logger,
    db,
    databaseUrl: config.databaseUrl,
    scenarios,
    onDropped: (count, reason) => metrics.recordsDropped(count, reason),
    settingsCache: { maxStaleMs: config.scenarioCacheStaleSeconds * 1000, onRefreshError },
  });
  // ── live tests: before execution, whose live runs run their shadows ──
  const shadows = createShadows({
    config: config.shadows,
    scenarioLocks: scenarioStore,
    logger,
    db,
    scenarios,
    engine,
    metrics,
    modelDocuments,
    maxStaleMs: config.scenarioCacheStaleSeconds * 1000,
    runTimeoutMs: config.limits.runTimeoutMs,
  });
  shadowsOfDeploys = shadows.deployListener;
  // ── execution ──
  const execution = createExecution({
    runShadows: shadows.live,
    runSplits: shadows.splitsLive,
    config,
    logger,
    db,
    deployedScenarios,
    engine,
    outbound,
    callbackSecrets: users,
    metrics,
    runListener: runListeners({ runFinished: (run) => metrics.runFinished(run) }, statistics.recorder),
    runRecorder: records.runRecorder,
    storedRunRecords: records.storedRunRecords,
    runErrorMasking: records.errorMasking,
  });
  // ── metrics ──
  metrics.setScrapeProbes({
    batchElementsPending: () => execution.batchStore.pendingElements(),
    jobQueueDepth: () => execution.queue.dueJobs(),
    engineQueuedItems: () => engine.queuedItems(),
    engineQuarantinedTenants: () => engine.poolStats()?.quarantinedTenants ?? 0,
  });
  // ── replay ──
  const replay = createReplay({
    config: config.replay,
    logger,
    store: replayStore,
    records: new MySqlDecisionRecordStore(db, { pageMaxChars: config.records.pageMaxChars }),
    scenarios,
    engine,
    queue: execution.queue,
    modelDocuments,
  });
  execution.sweeper.addSource(replay.stalledWork);
  // ── HTTP: YAML bodies ──
  const yamlParser = new YamlBodyParser({
    deadlineMs: config.limits.yamlParseMs,
    maxAliasCount: YAML_MAX_ALIAS_COUNT,
    maxHeapMb: YAML_PARSE_HEAP_MB,
  });
  return {
    config,
    logger,
    db,
    users,
    deployedScenarios,
    internalData,
    collectionLookups,
    outbound,
    engine,
    scenarios,
    records,
    execution,
    metrics,
    metricsExposition,
    statistics,
    replay,
    shadows,
    yamlParser,
    models,
    modelTester: new ModelTester(models, modelDocuments, engine),
    modelDocuments,
  };
}

/** The worker role of a process: take jobs (execution's and replays') and delete expired decision records and live test runs. */
export async function startWorkerRole(services: Services): Promise<void> {
  await services.execution.startWorker();
  services.records.startSweeper();
  services.shadows.startSweeper();
}

export async function closeServices(services: Services): Promise<void> {
  // ── execution ──
  await services.execution.close();
  // ── decision records: after execution, whose last runs it stores ──
  await services.records.close();
  // ── shadow runs still buffered ──
  await services.shadows.close();
  // ── engine ──
  await services.engine.dispose();
  // ── run statistics: what was counted since the last write ──
  await services.statistics.recorder.stop();
  await services.yamlParser.close();
  await services.db.destroy();
}

/** What `/health/ready` checks: a round trip to MySQL and to the job store. */
export function healthChecks(services: Services): HealthChecks {
  return {
    // Reachable is not enough: a database that lost its schema (or was never migrated) would answer every score with a 500.
    database: async () => {
      const problem = migrationProblem(await pendingMigrations(services.db));
      if (problem) throw new Error(problem);
    },
    jobStore: () => pingJobStore(services.config.jobsUrl),
  };
}
