import type { Logger } from 'pino';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import type { ReplayConfig } from '../config/config.js';
import type { ScenarioEngine } from '../engine/index.js';
import type { ExecutionQueue } from '../execution/execution-queue.js';
import type { StalledWorkSource } from '../execution/stalled-work-sweeper.js';
import type { RecordedRuns } from '../records/recorded-runs.js';
import type { ScenarioAccess } from '../scenarios/scenario-access.js';
import type { ScenarioVersions } from '../scenarios/scenario-versions.js';
import { REPLAY_JOB, ReplayJob, type ReplayJobData } from './replay-job.js';
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
  /** Replays whose job was lost, for execution's stalled-work sweeper. */
  stalledWork: StalledWorkSource;
}

export interface ReplayDependencies {
  config: ReplayConfig;
  logger: Logger;
  /** The replays table (built before the scenarios feature, whose deploy checks references in it). */
  store: ReplayStore;
  /** The recorded runs a replay reads (the records feature's read model: its store, as RecordedRuns). */
  records: RecordedRuns;
  /** The scenarios feature's ownership rule and versions. */
  scenarios: ScenarioAccess & ScenarioVersions;
  /** The shared engine (services.engine). */
  engine: ScenarioEngine;
  /** Execution's job queue: replays run as jobs of their own kind on the same workers. */
  queue: ExecutionQueue;
  /** The model registry's resolution of MODEL nodes (absent: none resolved). */
  modelDocuments?: ModelDocuments;
}

export function createReplay(deps: ReplayDependencies): Replay {
  const models = deps.modelDocuments ?? NO_MODELS;
  const job = new ReplayJob(
    deps.store,
    deps.records,
    deps.engine,
    { concurrency: deps.config.concurrency, pageSize: PAGE_SIZE, perWorker: deps.config.perWorker },
    deps.logger.child({ component: 'replay' }),
    models,
  );
  deps.queue.registerJobKind(job);
  return {
    service: new ReplayService(deps.config, deps.scenarios, deps.store, deps.records, deps.engine, deps.queue, models),
    job,
    stalledWork: stalledReplays(deps.store, deps.queue),
  };
}

/**
 * QUEUED replays whose job the job store lost (or never saved), and RUNNING ones whose worker and job are
 * both gone: queued again, unless a pending replay job covers them (a QUEUED replay only waiting for a
 * free worker keeps its one job).
 */
function stalledReplays(store: ReplayStore, queue: ExecutionQueue): StalledWorkSource {
  return {
    name: 'replays',
    async requeueStalled(cutoff, limit, pending) {
      const candidates = await store.stalled(cutoff, limit);
      if (candidates.length === 0) return 0;
      const covered = new Set(
        (await pending()).filter((job) => job.name === REPLAY_JOB).map((job) => (job.data as ReplayJobData).replayId),
      );
      let queued = 0;
      for (const replayId of candidates) {
        if (covered.has(replayId) || !(await store.claimStalled(cutoff, replayId))) continue;
        await queue.enqueue<ReplayJobData>(REPLAY_JOB, { replayId });
        queued += 1;
      }
      return queued;
    },
  };
}
