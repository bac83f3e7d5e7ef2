import type { Logger } from 'pino';
import type { ReplayConfig } from '../config/config.js';
import type { ScenarioEngine } from '../engine/index.js';
import type { ExecutionQueue } from '../execution/execution-queue.js';
import type { DecisionRecordStore } from '../records/decision-record-store-type.js';
import type { ScenarioAccess } from '../scenarios/scenario-access.js';
import type { ScenarioVersions } from '../scenarios/scenario-versions.js';
import { ReplayJob } from './replay-job.js';
import { ReplayService } from './replay-service.js';
import type { ReplayStore } from './replay-store-type.js';

/** Records read per query by a replay. */
const PAGE_SIZE = 1000;

/** What `services.replay` holds. */
export interface Replay {
  /** Start and read replays (the HTTP operations). */
  service: ReplayService;
  /** The worker side, registered on the execution queue (tests run it directly). */
  job: ReplayJob;
}

export interface ReplayDependencies {
  config: ReplayConfig;
  logger: Logger;
  /** The replays table (built before the scenarios feature, whose deploy checks references in it). */
  store: ReplayStore;
  /** The decision records a replay reads (the records feature's store). */
  records: DecisionRecordStore;
  /** The scenarios feature's ownership rule and versions. */
  scenarios: ScenarioAccess & ScenarioVersions;
  /** The shared engine (services.engine). */
  engine: ScenarioEngine;
  /** Execution's job queue: replays run as jobs of their own kind on the same workers. */
  queue: ExecutionQueue;
}

export function createReplay(deps: ReplayDependencies): Replay {
  const job = new ReplayJob(deps.store, deps.records, deps.engine, { concurrency: deps.config.concurrency, pageSize: PAGE_SIZE }, deps.logger.child({ component: 'replay' }));
  deps.queue.registerJobKind(job);
  return {
    service: new ReplayService(deps.config, deps.scenarios, deps.store, deps.records, deps.engine, deps.queue),
    job,
  };
}
