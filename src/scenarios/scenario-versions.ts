import type { ScenarioDocument } from '../engine/index.js';

/** One version of a scenario as it is at this moment, ready to compile and run. */
export interface VersionSnapshot {
  versionId: number;
  /** `develop` or the deployed version number. */
  label: string;
  /** See version-content.ts: what deploy compares with a replay's. */
  contentHash: string;
  document: ScenarioDocument;
}

/**
 * What the scenarios feature offers features that run a chosen version of a scenario (replay): the
 * development version or any deployed one, by label. Such features never read scenario tables.
 */
export interface ScenarioVersions {
  /** The scenario's version labelled `label` (`develop`, `1`, `2`, …); undefined when it has none. */
  snapshot(scenarioId: number, label: string): Promise<VersionSnapshot | undefined>;
  /** The latest deployed version (the live one); undefined when the scenario was never deployed. */
  latestDeployed(scenarioId: number): Promise<VersionSnapshot | undefined>;
}
