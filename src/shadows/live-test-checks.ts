import type { ScenarioEngine } from '../engine/index.js';
import type { ErrorCode } from '../errors/error-codes.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { ModelDocuments } from '../models/model-documents.js';
import type { AccessibleScenario } from '../scenarios/scenario-access.js';
import type { VersionSnapshot } from '../scenarios/scenario-versions.js';
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
