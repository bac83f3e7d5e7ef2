#!/usr/bin/env node
/**
 * `scoring-contract --base-url URL [--spec FILE|URL] [--write] [--timeout-ms N]` (in this repository:
 * `npm run contract -- …`): contract tests against any deployment. Fetches the served /openapi.json (or loads the
 * pinned contract given with --spec, and checks that the deployment serves each of its operations), calls every
 * operation it safely can, checks every response against that document, prints a table per operation and exits 1
 * on any violation (2 when it cannot run, e.g. the base URL is unreachable, named in the message).
 * Credentials come from the environment (README "Contract tests for your CI"):
 *   CONTRACT_BEARER_TOKEN   access token (management and internal data operations)
 *   CONTRACT_SCORE_TOKEN    score token of the same user (execution operations)
 *   CONTRACT_CONTEXT        `context` of management operations as JSON (default `{}`)
 *   CONTRACT_SCORE_SCENARIO, CONTRACT_SCORE_INPUTS   a deployed scenario and its inputs (JSON) to score in read-only mode
 * The kit is a developer tool run outside the service, so it reads its own environment here.
 */
import { parseArgs } from 'node:util';
import { formatReport } from './report.js';
import { runContract } from './run-contract.js';
import type { JsonObject } from './served-spec.js';

function usage(message: string): never {
  console.error(`${message}\nusage: scoring-contract --base-url URL [--spec FILE|URL] [--write] [--timeout-ms N]`);
  process.exit(2);
}

function json(name: string, text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return usage(`${name} is not JSON: ${(error as Error).message}`);
  }
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        'base-url': { type: 'string' },
        spec: { type: 'string' },
        write: { type: 'boolean', default: false },
        'timeout-ms': { type: 'string' },
      },
    });
  } catch (error) {
    return usage((error as Error).message);
  }
})();
const baseUrl = values['base-url'] ?? usage('--base-url is required');
if (!/^https?:\/\//.test(baseUrl)) usage(`--base-url must be an http(s) URL, got "${baseUrl}"`);
const env = process.env;
const scoreScenario = env.CONTRACT_SCORE_SCENARIO;

try {
  const { report, written } = await runContract({
    baseUrl,
    credentials: {
      bearerToken: env.CONTRACT_BEARER_TOKEN || undefined,
      scoreToken: env.CONTRACT_SCORE_TOKEN || undefined,
    },
    context: json('CONTRACT_CONTEXT', env.CONTRACT_CONTEXT),
    write: values.write,
    score: scoreScenario
      ? {
          scenario: scoreScenario,
          inputs: (json('CONTRACT_SCORE_INPUTS', env.CONTRACT_SCORE_INPUTS) ?? {}) as JsonObject,
        }
      : undefined,
    timeoutMs: values['timeout-ms'] ? Number(values['timeout-ms']) : undefined,
    spec: values.spec,
  });
  if (!env.CONTRACT_BEARER_TOKEN)
    console.log(
      'CONTRACT_BEARER_TOKEN is not set: management and internal data operations were only probed without credentials.',
    );
  if (!env.CONTRACT_SCORE_TOKEN)
    console.log('CONTRACT_SCORE_TOKEN is not set: execution operations were only probed without credentials.');
  console.log(formatReport(report));
  if (written) {
    console.log(
      `write run ${written.runId}: left scenarios ${written.scenarios.join(', ') || '(none)'} (the interface has no delete for scenarios)${written.collectionLeft ? `; could NOT delete collection ${written.collectionLeft}` : '; its collection was deleted'}`,
    );
  }
  process.exit(report.passed ? 0 : 1);
} catch (error) {
  console.error(`contract: ${(error as Error).message}`);
  process.exit(2);
}
