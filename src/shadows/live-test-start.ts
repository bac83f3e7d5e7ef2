import { timeOrderedId } from '../ids/time-ordered-id.js';
import type { ScenarioEngine } from '../engine/index.js';
import type { ModelDocuments } from '../models/model-documents.js';
import type { ScenarioAccess, ScenarioActor } from '../scenarios/scenario-access.js';
import type { ScenarioVersions } from '../scenarios/scenario-versions.js';

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

/**
 * What a live-test service (shadows, splits) is built from: the scenario operations' access rule and versions, its
 * own store, report builder and live side, and the engine and models a version is compiled with before it starts.
 */
export interface LiveTestParts<Store, Reports, Live> {
  scenarios: ScenarioAccess & ScenarioVersions;
  store: Store;
  reports: Reports;
  live: Live;
  engine: ScenarioEngine;
  models: ModelDocuments;
}
