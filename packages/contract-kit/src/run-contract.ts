import { readFile } from 'node:fs/promises';
import { ContractClient, type Credentials } from './contract-client.js';
import { runReadOnlyChecks } from './read-only-checks.js';
import { buildReport, type ContractReport } from './report.js';
import { ResponseChecker } from './response-checker.js';
import { ServedSpec, type JsonObject } from './served-spec.js';
import { runWriteChecks, type WriteRun } from './write-checks.js';

/**
 * The kit's core: fetch the served spec (or load the pinned one, `--spec`), run the checks, report per operation.
 * With a pinned spec, every check reads the pinned contract, and each of its operations must also be in what the
 * deployment serves (same method and path), so a deployment that drifted from what a client was generated from fails.
 */

export interface ContractOptions {
  baseUrl: string;
  credentials: Credentials;
  /** `context` for management operations; `{}` (the token's user on their own scenarios) by default. */
  context?: unknown;
  /** Also run the write tour (imports, deploys, scores, loads; cleans up what the interface can delete). */
  write?: boolean;
  /** A deployed scenario to score synchronously in read-only mode (synchronous scoring stores nothing). */
  score?: { scenario: string; inputs: JsonObject };
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** The pinned contract (a file or an http(s) URL) to check against, instead of the deployment's own /openapi.json. */
  spec?: string;
  /** How the pinned spec's file is read (node:fs by default). */
  readFile?: (path: string) => Promise<string>;
}

export interface ContractRun {
  report: ContractReport;
  /** What a write run left on the deployment. */
  written?: WriteRun;
}

export async function runContract(options: ContractOptions): Promise<ContractRun> {
  const fetchImpl = options.fetch ?? fetch;
  const served = await ServedSpec.fetch(options.baseUrl, fetchImpl);
  const spec = options.spec
    ? await ServedSpec.load(options.spec, fetchImpl, options.readFile ?? ((path) => readFile(path, 'utf8')))
    : served;
  const client = new ContractClient(options.baseUrl, spec, new ResponseChecker(spec), options.credentials, fetchImpl);
  if (options.spec) checkServedAgainstPinned(client, spec, served);
  const context = options.context ?? {};
  const hasBearer = Boolean(options.credentials.bearerToken);
  const hasScoreToken = Boolean(options.credentials.scoreToken);
  if (options.write && (!hasBearer || !hasScoreToken))
    throw new Error('--write needs both CONTRACT_BEARER_TOKEN and CONTRACT_SCORE_TOKEN');
  // A step that cannot go on (e.g. the served spec lacks an operation it needs) is a failure of the run, not a crash.
  const guarded = async (phase: string, checks: () => Promise<unknown>) => {
    try {
      await checks();
    } catch (error) {
      client.fail('(contract kit)', phase, `stopped: ${(error as Error).message}`);
    }
  };
  await guarded('read-only checks', () =>
    runReadOnlyChecks(client, spec, { context, hasBearer, hasScoreToken, score: options.score }),
  );
  let written: WriteRun | undefined;
  if (options.write) {
    await guarded('write checks', async () => {
      written = await runWriteChecks(client, spec, { context, timeoutMs: options.timeoutMs ?? 60_000 });
    });
  }
  return { report: buildReport(spec, client.exchanges), written };
}

/** Every operation of the pinned contract must be served, at the same method and path. */
function checkServedAgainstPinned(client: ContractClient, pinned: ServedSpec, served: ServedSpec): void {
  for (const operation of pinned.operations.values()) {
    const there = served.operation(operation.operationId);
    if (!there) {
      client.fail(
        operation.operationId,
        'the pinned contract',
        `the deployment's /openapi.json has no operation ${operation.operationId} (${operation.method.toUpperCase()} ${operation.path})`,
      );
    } else if (there.method !== operation.method || there.path !== operation.path) {
      client.fail(
        operation.operationId,
        'the pinned contract',
        `pinned as ${operation.method.toUpperCase()} ${operation.path}, served as ${there.method.toUpperCase()} ${there.path}`,
      );
    }
  }
}
