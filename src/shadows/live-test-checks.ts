import type { ScenarioEngine } from '../engine/index.js';
import type { ErrorCode } from '../errors/error-codes.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { ModelDocuments } from '../models/model-documents.js';
import type { AccessibleScenario, ScenarioAccess } from '../scenarios/scenario-access.js';
import type { ScenarioVersions, VersionSnapshot } from '../scenarios/scenario-versions.js';
import type { LiveTestStart } from './live-test-start.js';
import { hashCacheKey } from '../scenarios/version-content.js';

/**
 * Compiles a version about to run on live traffic (a shadow, a challenger), with the models its MODEL nodes name:
 * one that does not compile is refused now (422 COMPILE_ERROR, thrown by the engine), not found out by live runs.
 */
export async function checkCompiles(
  { models, engine }: { models: ModelDocuments; engine: ScenarioEngine },
  ownerId: number,
  snapshot: Pick<VersionSnapshot, 'document' | 'contentHash'>,
): Promise<void> {
  const resolved = await models.resolve(ownerId, snapshot.document, hashCacheKey(snapshot.contentHash));
  engine.compile(resolved.cacheKey, resolved.document);
}

/** A live test (shadow, split) of the scenario addressed, or 404 `code`: one of another scenario is not found either. */
export function ofScenario<Test extends { scenarioId: number }>(
  scenario: AccessibleScenario,
  test: Test | undefined,
  what: string,
  code: ErrorCode,
): Test {
  if (!test || test.scenarioId !== scenario.id)
    throw new NotFoundError(`Scenario "${scenario.name}" has no ${what}.`, code);
  return test;
}

/**
 * The scenario a live test starts on, if the caller may act on it, and its deployed version (the champion the test
 * runs beside), or 404 SCENARIO_NOT_DEPLOYED: `beside` says what for ("for a shadow to run beside").
 */
export async function scenarioAndChampion(
  scenarios: ScenarioAccess & ScenarioVersions,
  start: Pick<LiveTestStart<unknown>, 'actor' | 'scenarioId'>,
  beside: string,
): Promise<{ scenario: AccessibleScenario; champion: VersionSnapshot }> {
  const scenario = await scenarios.accessible(start.actor, start.scenarioId);
  const champion = await scenarios.latestDeployed(scenario.id);
  if (!champion)
    throw new NotFoundError(
      `Scenario "${scenario.name}" has no deployed version ${beside}; deploy it first.`,
      'SCENARIO_NOT_DEPLOYED',
    );
  return { scenario, champion };
}
