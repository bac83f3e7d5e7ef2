import { isIPv4, isIPv6 } from 'node:net';
import { readBoolean, readInt, readList, readNumber, readOptionalInt } from './env-values.js';

/**
 * Configuration from environment variables. Every variable has a documented default per
 * environment (README "Configuration"); production refuses to start with development secrets.
 */
export type Environment = 'production' | 'staging' | 'local' | 'test';

export interface JwtConfig {
  /** HS256 shared secret (local, test). */
  secret?: string;
  /** RS256 public key in PEM (an external identity provider). */
  publicKey?: string;
  /** RS256 keys fetched from a JWKS endpoint (an external identity provider). */
  jwksUri?: string;
  issuer?: string;
  audience?: string;
  /** Claim holding the username; `preferred_username` for most OIDC providers. */
  usernameClaim: string;
  /** Claim (array of strings) holding roles; a user is an admin when it contains `adminRole`. */
  rolesClaim: string;
  adminRole: string;
  /** Longest accepted token lifetime: `exp` is required, at most this far from `iat` and from now. */
  maxLifetimeSeconds: number;
}

export interface LimitsConfig {
  bodyBytes: number;
  /** Batch submissions carry many elements, so they have their own body limit. */
  batchBodyBytes: number;
  uploadBytes: number;
  /** Deepest nesting of a JSON or YAML body (the body itself is level 1); deeper is 400 NESTING_TOO_DEEP. */
  bodyDepth: number;
  /** Longest a YAML body may take to parse on the YAML parser's thread; longer is 413 BODY_TOO_COMPLEX. */
  yamlParseMs: number;
  /** Largest request line plus headers (Node's maxHeaderSize); larger is 431 HEADERS_TOO_LARGE. */
  headerBytes: number;
  batchMaxElements: number;
  runTimeoutMs: number;
  scriptMemoryMb: number;
  /** One budget for all the test cases (and validation data) of one validate or deploy. */
  testCasesBudgetMs: number;
  callbackMaxRetries: number;
  callbackMaxDelaySeconds: number;
  callbackTimeoutMs: number;
  /** Callback deliveries of one tenant in flight at once, across processes (leases in the job store's Redis); the others wait their turn as delayed jobs. */
  callbackSlotsPerTenant: number;
  /** Shortest delay before a callback retry (a requested delay of 0 is raised to it); each further retry doubles the delay. */
  callbackRetryFloorSeconds: number;
}

export interface AppConfig {
  environment: Environment;
  /**
   * Address the API listens on (HOST): 127.0.0.1 locally and in tests, so a development machine does not
   * serve its development secrets to its network; every address (Node's default) in production and staging,
   * where the service sits behind a load balancer or in a container. Undefined: every address.
   */
  host: string | undefined;
  port: number;
  databaseUrl: string;
  jobsUrl: string;
  logLevel: string;
  jwt: JwtConfig;
  limits: LimitsConfig;
  /** Hosts/CIDRs that HTTP nodes and callbacks may reach although private or loopback. */
  outboundAllowList: string[];
  /**
   * The deployment-wide secret of the legacy callback signature (`X-SCE-Signature: sha256=…` over
   * `<timestamp>.<body>`), sent only while `callbackLegacySignature` is on (the transition to per-user secrets).
   */
  callbackSigningSecret: string;
  /** CALLBACK_LEGACY_SIGNATURE: also send the legacy signature (default during the 1.x transition: true). */
  callbackLegacySignature: boolean;
  /** CALLBACK_SECRETS_KEY: the server key that seals users' callback signing secrets at rest. */
  callbackSecretsKey: string;
  /**
   * CALLBACK_SECRET_OVERLAP_SECONDS: after a rotation, how long the replaced callback secret still signs callbacks
   * beside the new one (0: not at all, for a leaked secret), so receivers can switch without refusing any.
   */
  callbackSecretOverlapSeconds: number;
  /** Worker: how many batch elements run at once per worker process. */
  workerConcurrency: number;
  /** Elements per batch job (one Agenda job covers this many elements). */
  batchChunkSize: number;
  /** Serve synchronous scoring on the fast lane (src/http/fast-lane.ts) instead of through Express. */
  scoreFastLane: boolean;
  /**
   * VALIDATE_RESPONSES: check every response against the spec on both lanes (Express and the fast
   * lane): one that breaks it is logged and answered as a 500. On for staging (and tests and local
   * runs) so drift shows before production; off by default in production, where it costs a schema
   * check per response (VALIDATE_RESPONSES=true turns it on there too).
   */
  validateResponses: boolean;
  /**
   * How long a process reuses a score-token look-up (0: never): the longest a disabled user or a
   * rotated token keeps working in a process other than the one that made the change.
   */
  scoreTokenCacheSeconds: number;
  /**
   * SCORE_TOKEN_STALE_SECONDS: how long past SCORE_TOKEN_CACHE_SECONDS a score-token look-up is still used while
   * it is read again in the background (stale-while-revalidate): the longest a disabled user or a rotated-out
   * token keeps working in another process during a MySQL outage.
   */
  scoreTokenStaleSeconds: number;
  /**
   * SCENARIO_CACHE_STALE_SECONDS: how long past their freshness (1 s; recording settings 5 s) a deployed version
   * and a scenario's recording settings are still used while read again in the background: how long sync
   * scoring rides out a MySQL outage.
   */
  scenarioCacheStaleSeconds: number;
  engine: EngineConfig;
  metrics: MetricsConfig;
  statistics: StatisticsConfig;
  records: RecordsConfig;
  replay: ReplayConfig;
  /** Shadows: versions run beside the live one on live traffic (src/shadows/, docs/live-tests.md). */
  shadows: ShadowsConfig;
  /** The model registry (src/models/, docs/models.md). */
  models: ModelsConfig;
}

/**
 * Prometheus metrics (src/metrics/): off unless METRICS_ENABLED=true. They name scenarios of every
 * tenant, so they are served on a listener of their own, never on the API's port: bound to
 * loopback by default, and behind a bearer token when METRICS_TOKEN is set.
 */
export interface MetricsConfig {
  enabled: boolean;
  /** Address the metrics listener binds to (127.0.0.1: only this host can scrape). */
  host: string;
  /** Port of the API process's metrics listener. */
  port: number;
  /** Port of a worker process's (`npm run worker`) metrics listener, so both fit on one host. */
  workerPort: number;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token?: string;
  /** Longest a scrape waits for a gauge read from MySQL or the job store; past it the gauge reads NaN. */
  probeTimeoutMs: number;
  /** Most (owner, scenario, version) label sets of scoring_runs_total; runs of further ones count under `_other`. */
  maxScenarioSeries: number;
}

/** The per-scenario run statistics behind getScenarioStatistics (src/statistics/): always on. */
export interface StatisticsConfig {
  /** How often a process writes what it counted (one bulk upsert per table). */
  flushMs: number;
  /** Buckets older than this are deleted. */
  retentionDays: number;
}
/** Replays (docs/replay.md): how large they may be and how they run. */
export interface ReplayConfig {
  /** Most records one replay may take (its `limit`, and the default limit); at most REPLAY_HARD_MAX_RECORDS. */
  maxRecords: number;
  /** Candidate runs a replay keeps in flight on the engine pool (the pool batches runs that queue up per crossing). */
  concurrency: number;
  /** Replays one scenario owner may have QUEUED or RUNNING at once: workers take replays in turn, so one owner's cannot fill the queue. */
  maxActivePerOwner: number;
  /** Replays one worker process runs at once, each of another owner (an owner's replays run one at a time). */
  perWorker: number;
}

/** Shadows (docs/live-tests.md): their budget of engine time, and how many a scenario may have. */
export interface ShadowsConfig {
  /**
   * SHADOW_ENGINE_SHARE: the most of the engine time this process spends (every lane, shadows included; or, when
   * that is more, of its event loop's idle time, weighted by how idle it was) that shadow work may cost, its
   * API-side work included, 0–1; past it sampled shadow runs are skipped and counted.
   */
  engineShare: number;
  /** SHADOW_MAX_IN_FLIGHT: shadow runs waiting or running at once in this process; past it they are skipped and counted. */
  maxInFlight: number;
  /** SHADOW_MAX_PER_SCENARIO: shadows a scenario may have that have not ENDED. */
  maxPerScenario: number;
  /** LIVE_TEST_RUNS_RETENTION_DAYS: shadow and split runs are deleted this long after they were stored. */
  runsRetentionDays: number;
}

/** The spec's ceiling on a replay's `limit`, whatever REPLAY_MAX_RECORDS says. */
export const REPLAY_HARD_MAX_RECORDS = 100_000;

/** Decision records (docs/records.md): how they are written and kept. */
export interface RecordsConfig {
  /** Key of the HMAC that masks pii-tagged inputs (equal values stay comparable; nobody can reverse them without it). */
  maskingSecret: string;
  /** Under load, records are inserted at most once per this many milliseconds per process (an idle process inserts at once). */
  flushIntervalMs: number;
  /** Most records per stored page (src/records/record-page.ts; a page is also sealed at about 1 MiB). */
  batchSize: number;
  /** Most records a process holds before they are stored; past it new records are dropped (and counted). */
  maxBuffered: number;
  /** How often a worker process deletes expired records. */
  retentionSweepMs: number;
  /** Write records with MariaDB's bulk protocol when the server is MariaDB (src/db/mariadb-bulk-insert.ts); else multi-row INSERTs. */
  bulkProtocol: boolean;
  /** Most bytes of record JSON one page of a records list holds, whatever its limit (at least one record), and about the most one list call reads. */
  pageMaxChars: number;
}

/** The engine's hosts (src/engine/pool/): scenario code runs in child processes, never in the API's or the worker's. */
/** The model registry's limits (ModelService). */
export interface ModelsConfig {
  /** Largest model file accepted (413 above). */
  maxBytes: number;
  /** Longest an ONNX file may take to load when it is checked at upload (in a child process; 400 past it). Default 20 s. */
  onnxLoadMs?: number;
}

export interface EngineConfig {
  /** Engine host processes running scenario code (one message at a time each); unset: the engine's default (src/engine/pool/pool-size.ts). */
  hosts?: number;
  /** Most hosts one tenant (scenario owner) may hold at once, across every lane; the others stay free for everyone else. Unset: the engine's default. */
  hostsPerTenant?: number;
  /** Tenant sandboxes (isolates) each host keeps warm. */
  isolatesPerHost: number;
  /** A host whose resident memory passes this many MB is replaced once idle (0: never). */
  hostMemoryMb: number;
  /** ONNX sessions each host keeps open: at most this many MB of model files, least recently used closed first. */
  onnxSessionsMb: number;
  /** Host deaths while one tenant's code ran, within quarantineMinutes, that put the tenant in quarantine (0: never). */
  quarantineAfterCrashes: number;
  /** How far back host deaths count, and how long a quarantine lasts. */
  quarantineWindowMs: number;
  /** How much lower the hosts' scheduling priority is than the process's (nice increment, 0–19). */
  hostNice: number;
}

/** The deepest LIMIT_BODY_DEPTH accepted (see assertUsable). */
export const MAX_BODY_DEPTH = 256;

const DEV_SECRET = 'local-development-secret-change-me';

/** The database and the job store used when DATABASE_URL and JOBS_URL are not set: none where deployed. */
const DEFAULT_URLS: Record<Environment, Pick<AppConfig, 'databaseUrl' | 'jobsUrl'>> = {
  production: { databaseUrl: '', jobsUrl: '' },
  staging: { databaseUrl: '', jobsUrl: '' },
  local: { databaseUrl: 'mysql://root@127.0.0.1:3306/scoring', jobsUrl: 'redis://127.0.0.1:6379/0' },
  test: { databaseUrl: 'mysql://root@127.0.0.1:3306/scoring_test', jobsUrl: 'redis://127.0.0.1:6379/1' },
};

function readEnvironment(env: NodeJS.ProcessEnv): Environment {
  const value = env.APP_ENV ?? (env.NODE_ENV === 'test' ? 'test' : 'local');
  if (!['production', 'staging', 'local', 'test'].includes(value)) {
    throw new Error(`APP_ENV must be one of production, staging, local, test; got "${value}"`);
  }
  return value as Environment;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const environment = readEnvironment(env);
  const deployed = environment === 'production' || environment === 'staging';
  const config: AppConfig = {
    environment,
    host: env.HOST || (deployed ? undefined : '127.0.0.1'),
    port: readInt(env, 'PORT', 8080),
    databaseUrl: env.DATABASE_URL ?? DEFAULT_URLS[environment].databaseUrl,
    jobsUrl: env.JOBS_URL ?? DEFAULT_URLS[environment].jobsUrl,
    logLevel: env.LOG_LEVEL ?? (environment === 'test' ? 'silent' : 'info'),
    jwt: {
      secret: env.JWT_SECRET ?? (deployed ? undefined : DEV_SECRET),
      publicKey: env.JWT_PUBLIC_KEY,
      jwksUri: env.JWT_JWKS_URI,
      issuer: env.JWT_ISSUER,
      audience: env.JWT_AUDIENCE,
      usernameClaim: env.JWT_USERNAME_CLAIM ?? 'preferred_username',
      rolesClaim: env.JWT_ROLES_CLAIM ?? 'roles',
      adminRole: env.JWT_ADMIN_ROLE ?? 'admin',
      maxLifetimeSeconds: readInt(env, 'JWT_MAX_LIFETIME_SECONDS', 86_400),
    },
    limits: {
      bodyBytes: readInt(env, 'LIMIT_BODY_BYTES', 1_048_576),
      batchBodyBytes: readInt(env, 'LIMIT_BATCH_BODY_BYTES', 64 * 1_048_576),
      uploadBytes: readInt(env, 'LIMIT_UPLOAD_BYTES', 512 * 1_048_576),
      bodyDepth: readInt(env, 'LIMIT_BODY_DEPTH', 64),
      yamlParseMs: readInt(env, 'LIMIT_YAML_PARSE_MS', 3000),
      headerBytes: readInt(env, 'LIMIT_HEADER_BYTES', 16_384),
      batchMaxElements: readInt(env, 'LIMIT_BATCH_ELEMENTS', 100_000),
      runTimeoutMs: readInt(env, 'LIMIT_RUN_TIMEOUT_MS', 1000),
      scriptMemoryMb: readInt(env, 'LIMIT_SCRIPT_MEMORY_MB', 128),
      testCasesBudgetMs: readInt(env, 'LIMIT_TEST_CASES_BUDGET_MS', 3000),
      callbackMaxRetries: readInt(env, 'LIMIT_CALLBACK_RETRIES', 10),
      callbackMaxDelaySeconds: readInt(env, 'LIMIT_CALLBACK_DELAY_SECONDS', 3600),
      callbackTimeoutMs: readInt(env, 'CALLBACK_TIMEOUT_MS', 5000),
      callbackSlotsPerTenant: readInt(env, 'CALLBACK_SLOTS_PER_TENANT', 4),
      callbackRetryFloorSeconds: readInt(env, 'CALLBACK_RETRY_FLOOR_SECONDS', 1),
    },
    outboundAllowList: readList(env, 'OUTBOUND_ALLOW_LIST'),
    callbackSigningSecret: env.CALLBACK_SIGNING_SECRET ?? (deployed ? '' : DEV_SECRET),
    callbackLegacySignature: readBoolean(env, 'CALLBACK_LEGACY_SIGNATURE', true),
    callbackSecretsKey: env.CALLBACK_SECRETS_KEY ?? (deployed ? '' : DEV_SECRET),
    callbackSecretOverlapSeconds: readInt(env, 'CALLBACK_SECRET_OVERLAP_SECONDS', 86_400),
    workerConcurrency: readInt(env, 'WORKER_CONCURRENCY', 64),
    batchChunkSize: readInt(env, 'BATCH_CHUNK_SIZE', 500),
    scoreFastLane: env.SCORE_FAST_LANE !== 'false',
    validateResponses: readBoolean(env, 'VALIDATE_RESPONSES', environment !== 'production'),
    scoreTokenCacheSeconds: readInt(env, 'SCORE_TOKEN_CACHE_SECONDS', 5),
    scoreTokenStaleSeconds: readInt(env, 'SCORE_TOKEN_STALE_SECONDS', 60),
    scenarioCacheStaleSeconds: readInt(env, 'SCENARIO_CACHE_STALE_SECONDS', 60),
    engine: readEngineConfig(env),
    metrics: {
      enabled: readBoolean(env, 'METRICS_ENABLED', false),
      host: env.METRICS_HOST || '127.0.0.1',
      port: readInt(env, 'METRICS_PORT', 9464),
      workerPort: readInt(env, 'WORKER_METRICS_PORT', 9465),
      token: env.METRICS_TOKEN || undefined,
      probeTimeoutMs: readInt(env, 'METRICS_PROBE_TIMEOUT_MS', 1000),
      maxScenarioSeries: readInt(env, 'METRICS_MAX_SCENARIO_SERIES', 2000),
    },
    statistics: {
      flushMs: readInt(env, 'STATISTICS_FLUSH_MS', 2000),
      retentionDays: readInt(env, 'STATISTICS_RETENTION_DAYS', 30),
    },
    records: {
      maskingSecret: env.RECORDS_MASKING_SECRET ?? (deployed ? '' : DEV_SECRET),
      flushIntervalMs: readInt(env, 'RECORDS_FLUSH_MS', 50),
      batchSize: readInt(env, 'RECORDS_BATCH_SIZE', 1000),
      maxBuffered: readInt(env, 'RECORDS_BUFFER', 20_000),
      retentionSweepMs: readInt(env, 'RECORDS_RETENTION_SWEEP_SECONDS', 600) * 1000,
      bulkProtocol: readBoolean(env, 'RECORDS_BULK_PROTOCOL', true),
      pageMaxChars: readInt(env, 'RECORDS_PAGE_MAX_CHARS', 16 * 1024 * 1024),
    },
    replay: {
      maxRecords: readInt(env, 'REPLAY_MAX_RECORDS', 10_000),
      concurrency: readInt(env, 'REPLAY_CONCURRENCY', 256),
      maxActivePerOwner: readInt(env, 'REPLAY_MAX_ACTIVE_PER_OWNER', 2),
      perWorker: readInt(env, 'REPLAY_PER_WORKER', 4),
    },
    shadows: {
      engineShare: readNumber(env, 'SHADOW_ENGINE_SHARE', 0.25),
      maxInFlight: readInt(env, 'SHADOW_MAX_IN_FLIGHT', 256),
      maxPerScenario: readInt(env, 'SHADOW_MAX_PER_SCENARIO', 5),
      runsRetentionDays: readInt(env, 'LIVE_TEST_RUNS_RETENTION_DAYS', 30),
    },
    models: {
      maxBytes: readInt(env, 'MODEL_MAX_BYTES', 8 * 1_048_576),
      onnxLoadMs: readInt(env, 'MODEL_ONNX_LOAD_MS', 20_000),
    },
  };
  assertUsable(config);
  return config;
}

function readEngineConfig(env: NodeJS.ProcessEnv): EngineConfig {
  return {
    hosts: readOptionalInt(env, 'ENGINE_HOSTS'),
    hostsPerTenant: readOptionalInt(env, 'ENGINE_HOSTS_PER_TENANT'),
    isolatesPerHost: readInt(env, 'ENGINE_ISOLATES_PER_HOST', 32),
    hostMemoryMb: readInt(env, 'ENGINE_HOST_MEMORY_MB', 2048),
    onnxSessionsMb: readInt(env, 'ONNX_SESSIONS_MB', 256),
    quarantineAfterCrashes: readInt(env, 'ENGINE_QUARANTINE_AFTER_CRASHES', 2),
    quarantineWindowMs: readInt(env, 'ENGINE_QUARANTINE_MINUTES', 10) * 60_000,
    hostNice: readInt(env, 'ENGINE_HOST_NICE', 10),
  };
}

/**
 * An address only this machine reaches: `localhost`, or an IP literal in 127.0.0.0/8, `::1` or their
 * IPv4-mapped form. A host name that merely starts with `127.` (`127.evil.example`) is a name like any other.
 */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  const address = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (isIPv4(address)) return address.startsWith('127.');
  if (!isIPv6(address)) return false;
  if (address === '::1' || address === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^(?:0:0:0:0:0|):ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address.replace(/^::/, ':'));
  return mapped !== null && isIPv4(mapped[1]) && mapped[1].startsWith('127.');
}

function assertUsable(config: AppConfig): void {
  const problems: string[] = [];
  if (!config.databaseUrl) problems.push('DATABASE_URL is required');
  if (!config.jobsUrl) problems.push('JOBS_URL is required');
  else if (!/^(mongodb(\+srv)?|rediss?|postgres(ql)?):\/\//.test(config.jobsUrl))
    problems.push('JOBS_URL must start with mongodb://, redis:// or postgres://');
  if (config.databaseUrl && !/^mysql:\/\//.test(config.databaseUrl))
    problems.push('DATABASE_URL must start with mysql://');
  const { jwt } = config;
  if (!jwt.secret && !jwt.publicKey && !jwt.jwksUri)
    problems.push('one of JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URI is required');
  if (jwt.maxLifetimeSeconds < 1) problems.push('JWT_MAX_LIFETIME_SECONDS must be at least 1');
  if (
    (config.environment === 'production' || config.environment === 'staging') &&
    config.callbackLegacySignature &&
    !config.callbackSigningSecret
  ) {
    problems.push('CALLBACK_SIGNING_SECRET is required while CALLBACK_LEGACY_SIGNATURE is true');
  }
  if ((config.environment === 'production' || config.environment === 'staging') && !config.callbackSecretsKey) {
    problems.push('CALLBACK_SECRETS_KEY is required');
  }
  if ((config.environment === 'production' || config.environment === 'staging') && !config.records.maskingSecret) {
    problems.push('RECORDS_MASKING_SECRET is required');
  }
  if (config.records.batchSize < 1) problems.push('RECORDS_BATCH_SIZE must be at least 1');
  if (config.records.pageMaxChars < 1) problems.push('RECORDS_PAGE_MAX_CHARS must be at least 1');
  if (config.records.retentionSweepMs < 1000) problems.push('RECORDS_RETENTION_SWEEP_SECONDS must be at least 1');
  if (config.replay.maxRecords < 1 || config.replay.maxRecords > REPLAY_HARD_MAX_RECORDS)
    problems.push(`REPLAY_MAX_RECORDS must be between 1 and ${REPLAY_HARD_MAX_RECORDS}`);
  if (config.replay.concurrency < 1) problems.push('REPLAY_CONCURRENCY must be at least 1');
  if (config.replay.maxActivePerOwner < 1) problems.push('REPLAY_MAX_ACTIVE_PER_OWNER must be at least 1');
  if (config.replay.perWorker < 1) problems.push('REPLAY_PER_WORKER must be at least 1');
  if (!(config.shadows.engineShare >= 0 && config.shadows.engineShare <= 1))
    problems.push('SHADOW_ENGINE_SHARE must be between 0 and 1');
  if (config.shadows.maxInFlight < 1) problems.push('SHADOW_MAX_IN_FLIGHT must be at least 1');
  if (config.shadows.maxPerScenario < 1) problems.push('SHADOW_MAX_PER_SCENARIO must be at least 1');
  if (config.shadows.runsRetentionDays < 1) problems.push('LIVE_TEST_RUNS_RETENTION_DAYS must be at least 1');
  if (config.engine.hosts !== undefined && config.engine.hosts < 1) problems.push('ENGINE_HOSTS must be at least 1');
  if (config.engine.hostsPerTenant !== undefined && config.engine.hostsPerTenant < 1)
    problems.push('ENGINE_HOSTS_PER_TENANT must be at least 1');
  if (config.engine.isolatesPerHost < 1) problems.push('ENGINE_ISOLATES_PER_HOST must be at least 1');
  if (config.engine.hostMemoryMb < 0) problems.push('ENGINE_HOST_MEMORY_MB must be 0 or more');
  if (config.engine.onnxSessionsMb < 1) problems.push('ONNX_SESSIONS_MB must be at least 1');
  if (config.engine.quarantineAfterCrashes < 0) problems.push('ENGINE_QUARANTINE_AFTER_CRASHES must be 0 or more');
  if (config.engine.quarantineWindowMs < 60_000) problems.push('ENGINE_QUARANTINE_MINUTES must be at least 1');
  if (config.engine.hostNice > 19) problems.push('ENGINE_HOST_NICE must be between 0 and 19');
  // Past a few hundred levels the YAML parser and JSON.stringify run out of stack: the limit must stay well below.
  if (config.limits.bodyDepth < 1 || config.limits.bodyDepth > MAX_BODY_DEPTH)
    problems.push(`LIMIT_BODY_DEPTH must be between 1 and ${MAX_BODY_DEPTH}`);
  if (config.limits.callbackSlotsPerTenant < 1) problems.push('CALLBACK_SLOTS_PER_TENANT must be at least 1');
  if (config.callbackSecretOverlapSeconds < 0 || config.callbackSecretOverlapSeconds > 2_592_000)
    problems.push('CALLBACK_SECRET_OVERLAP_SECONDS must be between 0 and 2592000 (30 days)');
  if (config.limits.callbackRetryFloorSeconds < 1) problems.push('CALLBACK_RETRY_FLOOR_SECONDS must be at least 1');
  if (config.limits.yamlParseMs < 100) problems.push('LIMIT_YAML_PARSE_MS must be at least 100');
  if (config.limits.headerBytes < 1024) problems.push('LIMIT_HEADER_BYTES must be at least 1024');
  if (config.metrics.enabled && !isLoopback(config.metrics.host) && !config.metrics.token) {
    problems.push(
      "METRICS_TOKEN is required when METRICS_HOST is not a loopback address (the metrics name every tenant's scenarios)",
    );
  }
  if (config.statistics.flushMs < 100) problems.push('STATISTICS_FLUSH_MS must be at least 100');
  if (config.statistics.retentionDays < 1) problems.push('STATISTICS_RETENTION_DAYS must be at least 1');
  if (problems.length > 0) throw new Error(`Invalid configuration: ${problems.join('; ')}`);
}
