import type { ScenarioActor } from './scenario-service.js';

/**
 * What the scenarios feature offers features that answer id-addressed operations about a scenario
 * (run statistics): the one access rule of those operations, with the same errors.
 */
export interface AccessibleScenarios {
  /**
   * The scenario with this id when `actor` may act on it. Throws 404 SCENARIO_NOT_FOUND for an id that
   * is not one of ours, 403 FORBIDDEN for another user's scenario unless the actor is an admin.
   */
  accessible(actor: ScenarioActor, id: string): Promise<{ id: number; name: string; ownerId: number }>;
}
