/**
 * The import boundaries of docs/architecture.md ("Boundaries as code"), checked by
 * `npx depcruise src --config .dependency-cruiser.cjs` (npm run lint:boundaries). Why each rule exists:
 * docs/adr/0015-boundaries-as-code.md. Type-only imports count: a type is a dependency too.
 */
const FEATURES = '(scenarios|internal-data|execution|records|replay|statistics|models|auth|metrics|outbound)';
/** Node's modules that reach outside the process: files, sockets, processes, threads. */
const NODE_IO =
  '^(node:)?(fs|fs/promises|net|http|https|http2|dgram|dns|tls|child_process|cluster|worker_threads|readline|repl|inspector)$';
/** Packages that talk to a database, a job store, the network or serve HTTP. */
const IO_PACKAGES =
  '(^|node_modules/)(knex|mysql2|mariadb|pg|mongodb|ioredis|agenda|@agendajs/.+|express|axios|multer|passport|passport-jwt|jwks-rsa|swagger-ui-express|prom-client|pino)(/|$)';

module.exports = {
  forbidden: [
    {
      name: 'engine-is-pure',
      comment:
        "The engine reaches the outside world only through src/engine/ports.ts: it imports nothing of the service (no db, no feature, no http, no generated/ code). The spec's schemas as types (generated/api-types.ts, type-only: see generated-types-are-types) are the document's own shapes (ADR 0026).",
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^(src/(?!engine/)|generated/(?!api-types\\.ts$))' },
    },
    {
      name: 'engine-no-io-packages',
      comment: 'No database, job store, HTTP client or server in the engine.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        path: IO_PACKAGES,
      },
    },
    {
      name: 'engine-no-node-io',
      comment:
        'Only the engine pool spawns and watches its host processes (child_process, worker_threads, crash records on disk), and ' +
        'spec-schemas.ts reads spec/openapi.json once (the contract, read-only). Nothing else in the engine does I/O.',
      severity: 'error',
      from: { path: '^src/engine/', pathNot: '^src/engine/(pool/|document/spec-schemas\\.ts$)' },
      to: { dependencyTypes: ['core'], path: NODE_IO },
    },
    {
      name: 'engine-spec-schemas-reads-only',
      comment: 'spec-schemas.ts may read a file, nothing more.',
      severity: 'error',
      from: { path: '^src/engine/document/spec-schemas\\.ts$' },
      to: { dependencyTypes: ['core'], path: NODE_IO, pathNot: '^(node:)?fs$' },
    },
    {
      name: 'feature-not-http',
      comment: 'A feature knows no HTTP: only its *-routes.ts file (its HTTP edge) touches src/http/.',
      severity: 'error',
      from: { path: `^src/${FEATURES}/`, pathNot: '-routes\\.ts$' },
      to: { path: '^src/http/' },
    },
    {
      name: 'routes-use-the-handler-contract-only',
      comment:
        "A feature's routes import from src/http/ only the handler contract (types) and the date-time parameter rule.",
      severity: 'error',
      from: { path: `^src/${FEATURES}/.+-routes\\.ts$` },
      to: { path: '^src/http/', pathNot: '^src/http/(operation-handler|date-time-parameter)\\.ts$' },
    },
    {
      name: 'routes-handler-contract-is-types',
      comment: 'The handler contract is imported as types only.',
      severity: 'error',
      from: { path: `^src/${FEATURES}/.+-routes\\.ts$` },
      to: { path: '^src/http/operation-handler\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'http-knows-no-feature',
      comment:
        'src/http/ is plumbing: it imports no feature (the handler map is built in the composition root). Auth is the one ' +
        'exception: the fast lane checks the score token with the same function as Express (authenticateScoreToken).',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: `^src/${FEATURES}/`, pathNot: '^src/auth/(authenticate|user-service|authenticated-user)\\.ts$' },
    },
    {
      name: 'plumbing-knows-no-feature',
      comment:
        'errors, config, db, ids and net are shared plumbing: they import no feature, no engine, no http, and not the composition root.',
      severity: 'error',
      from: { path: '^src/(errors|config|db|ids|net)/' },
      to: { path: `^src/(${FEATURES.slice(1, -1)}|engine|http|services\\.ts|app\\.ts)` },
    },
    {
      name: 'errors-know-no-db',
      comment: 'Errors are the bottom layer: the error handler is told how to map outages, it does not import the db.',
      severity: 'error',
      from: { path: '^src/errors/' },
      to: { path: '^src/(db|config)/' },
    },
    {
      name: 'metrics-knows-no-http-or-execution',
      comment: 'Metrics are told of runs through their own interface; they import neither http nor execution.',
      severity: 'error',
      from: { path: '^src/metrics/' },
      to: { path: '^src/(http|execution)/' },
    },
    {
      name: 'replay-reads-recorded-runs-only',
      comment:
        'Replay reads the decision records through their narrow read model (src/records/recorded-runs.ts) and their types.',
      severity: 'error',
      from: { path: '^src/replay/' },
      to: { path: '^src/records/', pathNot: '^src/records/(recorded-runs|decision-record)\\.ts$' },
    },
    {
      name: 'nothing-imports-the-composition-root',
      comment:
        'services.ts, handler-map.ts, app.ts, main.ts and worker.ts wire the folders together; no folder imports them (a routes file takes its own deps).',
      severity: 'error',
      from: { path: '^src/.+/' },
      to: { path: '^src/(services|handler-map|app|main|worker)\\.ts$' },
    },
    {
      name: 'only-the-composition-root-builds-handlers',
      comment:
        "The handler map, and so every feature's routes, is assembled by src/services.ts / src/app.ts / src/main.ts level only.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(handler-map|services|app|main)\\.ts$' },
      to: { path: `^src/${FEATURES}/.+-routes\\.ts$` },
    },
    {
      name: 'generated-operations-through-the-handler-contract',
      comment:
        'generated/operations.ts reaches the code through src/http/operation-handler.ts (OperationRequest, OperationReply).',
      severity: 'error',
      from: { pathNot: '^src/http/operation-handler\\.ts$' },
      to: { path: '^generated/operations\\.ts$' },
    },
    {
      name: 'generated-routes-at-the-edge',
      comment:
        "The route table (generated/routes.ts) is read by the HTTP edge and by authentication (an operation's security) only.",
      severity: 'error',
      from: { pathNot: '^src/(http/|auth/|app\\.ts$)' },
      to: { path: '^generated/routes\\.ts$' },
    },
    {
      name: 'generated-types-are-types',
      comment:
        "generated/api-types.ts holds the spec's schemas as types: imported type-only (DTOs, and the engine's document shapes, ADR 0026), never as code.",
      severity: 'error',
      from: {},
      to: { path: '^generated/api-types\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-folder-cycles',
      comment: "No cycle between folders: each folder's imports point one way.",
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-cycles',
      comment:
        'No cycle between modules at run time. Cycles made only of type-only imports (a store and its interface, ' +
        "the engine's types and ports) load in any order and are left to the folder rule above (ADR 0015).",
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is a bug (or a package missing from package.json).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/db/migrations/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.mjs', '.js', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
