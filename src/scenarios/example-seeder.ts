import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { UserService } from '../auth/user-service.js';
import type { ScenarioService } from './scenario-service.js';
import type { ScenarioImportDto } from './scenario-types.js';

export const EXAMPLE_PATH = new URL('../../examples/credit-decision.yaml', import.meta.url);

export interface SeedResult {
  username: string;
  /** The user's score token, when this run issued it (the user had none); it is never shown again. */
  scoreToken?: string;
  scenarioName: string;
  scenarioId: string;
  /** The deployed version scoring runs. */
  version: string;
  /** Whether this run deployed a new version (false when the deployed version already matched). */
  deployed: boolean;
}

/**
 * Creates `username` if missing (issuing its score token), imports the example scenario (overwrite_develop) and deploys it
 * unless its latest deployed version already has the same content: running it twice changes nothing.
 */
export async function seedExample(
  deps: { users: UserService; scenarios: ScenarioService },
  username = 'demo',
  path: URL = EXAMPLE_PATH,
): Promise<SeedResult> {
  const user = await deps.users.ensureUser(username, false);
  const scoreToken = await deps.users.issueScoreToken(user.id);
  const actor = { owner: { id: user.id, username: user.username }, isAdmin: false };
  const example = parseYaml(await readFile(path, 'utf8')) as ScenarioImportDto;
  const [outcome] = await deps.scenarios.importScenarios(actor, example, {
    overwriteDevelop: true,
    overwriteDeploy: false,
  });
  const scenarioId = outcome.scenarioId as string;
  const versions = await deps.scenarios.listVersions(actor, scenarioId);
  const latest = versions.find((version) => version.status === 'DEPLOYED');
  const develop = await deps.scenarios.open(actor, scenarioId);
  let version = latest?.version;
  let deployed = false;
  if (!latest || !(await deps.scenarios.deployedMatchesDevelop(actor, scenarioId))) {
    version = await deps.scenarios.deploy(actor, scenarioId);
    deployed = true;
  }
  return {
    username: user.username,
    ...(scoreToken ? { scoreToken } : {}),
    scenarioName: develop.name,
    scenarioId,
    version: version as string,
    deployed,
  };
}
