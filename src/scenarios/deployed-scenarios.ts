import type { ScenarioDocument } from '../engine/index.js';

/**
 * What the scenarios feature offers other features (execution): the latest deployed version of an
 * owner's scenario, ready to compile. Execution depends on this interface only, never on the
 * scenario tables.
 */
export interface DeployedScenario {
  scenarioId: number;
  /** The owner's username (metrics label runs by owner and scenario name). */
  ownerName: string;
  /** The scenario's owner (whose collections and scenarios its runs reach). */
  ownerId: number;
  name: string;
  versionId: number;
  /** The version label (`1`, `2`, …). */
  version: string;
  /** Engine compile-cache key: one per version, never reused (see deployedCacheKey). */
  cacheKey: string;
  document: ScenarioDocument;
}

export interface DeployedScenarios {
  /**
   * The latest deployed version of `name` owned by `ownerId`. Throws NotFoundError with code
   * SCENARIO_NOT_FOUND (the owner has no scenario of that name) or SCENARIO_NOT_DEPLOYED (it has
   * never been deployed).
   */
  require(ownerId: number, name: string): Promise<DeployedScenario>;
}

/** The compile-cache key of a deployed version: versions are immutable, so their id is enough. */
export function deployedCacheKey(versionId: number): string {
  return `version:${versionId}`;
}
