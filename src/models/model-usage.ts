/**
 * What the model registry needs to know of scenarios before it deletes a version: which deployed
 * scenarios use it. Implemented by the scenarios feature (src/scenarios/deployed-model-references.ts)
 * over its own tables; models runs no SQL on scenario tables.
 */
export interface ModelUsage {
  /**
   * Names of the owner's scenarios whose latest deployed version has a MODEL node naming `model` at
   * `version`, or at `latest` when `isNewest` (that version is the model's newest).
   */
  scenariosUsing(ownerId: number, model: string, version: number, isNewest: boolean): Promise<string[]>;
}
