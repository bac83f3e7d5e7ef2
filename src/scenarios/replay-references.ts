/**
 * How deploy checks the optional `replay` reference it stores with a new version (deployScenario,
 * docs/replay.md). The replay feature implements it; scenarios only asks.
 */
export interface ReplayReferences {
  /**
   * Returns when `replayId` is a FINISHED replay of the scenario whose candidate had exactly the
   * content `contentHash` (version-content.ts); otherwise throws 404 REPLAY_NOT_FOUND, 409
   * REPLAY_NOT_FINISHED or 409 REPLAY_CONTENT_MISMATCH, naming `query.replay`.
   */
  requireTested(scenario: { id: number; name: string }, replayId: string, contentHash: string): Promise<void>;
}
