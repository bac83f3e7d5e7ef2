import { ConflictError } from '../errors/conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { ReplayReferences } from '../scenarios/replay-references.js';
import type { ReplayStore } from './replay-store-type.js';

/** Deploy's `replay` reference, checked against the replays table (see ReplayReferences). */
export class ReplayReferenceCheck implements ReplayReferences {
  constructor(private readonly store: ReplayStore) {}

  async requireTested(scenario: { id: number; name: string }, replayId: string, contentHash: string): Promise<void> {
    const replay = await this.store.find(replayId);
    const where = [{ path: 'query.replay', message: '' }];
    if (!replay || replay.scenarioId !== scenario.id) {
      throw new NotFoundError(`Scenario "${scenario.name}" has no replay "${replayId}".`, 'REPLAY_NOT_FOUND', [
        { ...where[0], message: 'is not a replay of this scenario' },
      ]);
    }
    if (replay.state !== 'FINISHED') {
      throw new ConflictError(
        `Replay "${replayId}" is ${replay.state}; deploy with it once it has FINISHED.`,
        'REPLAY_NOT_FINISHED',
        [{ ...where[0], message: `is ${replay.state}` }],
      );
    }
    if (replay.candidate.contentHash !== contentHash) {
      throw new ConflictError(
        `Replay "${replayId}" tested other content (version ${replay.candidate.label} as it was then) than the development version being deployed; replay the development version again.`,
        'REPLAY_CONTENT_MISMATCH',
        [{ ...where[0], message: 'tested other content than is being deployed' }],
      );
    }
  }
}
