import { timeOrderedId } from '../ids/time-ordered-id.js';
import type { ScenarioActor } from '../scenarios/scenario-access.js';

/**
 * What starting a live test (attaching a shadow, creating a split) takes: who asks, the username recorded as its
 * creator, the scenario addressed and the request body. `id` is given only where a fixed id is wanted (the seed of
 * the docs' examples); a new time-ordered id otherwise.
 */
export interface LiveTestStart<Request> {
  actor: ScenarioActor;
  createdBy: string;
  scenarioId: string;
  request: Request;
  id?: string;
}

/** The id a live test is stored under: the one given, or a new time-ordered one. */
export function liveTestId(start: Pick<LiveTestStart<unknown>, 'id'>): string {
  return start.id ?? timeOrderedId();
}
