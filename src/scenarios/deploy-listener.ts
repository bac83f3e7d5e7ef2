/**
 * Told by deploy, once the new version is committed, that a scenario has a new live version. The live
 * tests feature implements it (the shadows of the replaced champion end: docs/live-tests.md); scenarios
 * only tells. A listener that throws fails the deploy's answer, not the deploy (it is committed).
 */
export interface DeployListener {
  deployed(scenario: { id: number; name: string }, label: string): Promise<void>;
}

export const NO_DEPLOY_LISTENER: DeployListener = { deployed: async () => undefined };
