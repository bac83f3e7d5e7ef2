import { timeOrderedId } from '../ids/time-ordered-id.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import type { components } from '../../generated/api-types.js';
import type { ReplayConfig } from '../config/config.js';
import type { ScenarioEngine } from '../engine/index.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { ConflictError } from '../errors/conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { ExecutionQueue } from '../execution/execution-queue.js';
import { jobStoreUnavailable } from '../execution/job-store-unavailable.js';
import type { RecordedRuns, RecordFilter } from '../records/recorded-runs.js';
import type { ScenarioAccess, ScenarioActor } from '../scenarios/scenario-access.js';
import type { ScenarioVersions } from '../scenarios/scenario-versions.js';
import { hashCacheKey } from '../scenarios/version-content.js';
import { REPLAY_JOB, type ReplayJobData } from './replay-job.js';
import { hasEnded, type ReplayListing, type ReplayRecord } from './replay.js';
import { decodeReplayCursor, encodeReplayCursor } from './replay-cursor.js';
import type { ReplayStore } from './replay-store-type.js';

type ReplayRequestDto = components['schemas']['ReplayRequest'];
type ReplayDto = components['schemas']['Replay'];
type ReplayPageDto = components['schemas']['ReplayPage'];
type RecordFilterDto = components['schemas']['RecordFilter'];

/** A replay request with its filter's date-times parsed by the routes (src/http/date-time-parameter.ts: 400 outside 1970–9999). */
export interface StartReplay extends Omit<ReplayRequestDto, 'filter'> {
  filter?: RequestedRecordFilter;
}

interface RequestedRecordFilter extends Omit<RecordFilterDto, 'from' | 'to'> {
  from?: Date;
  to?: Date;
}

/** Changed records shown side by side when the request does not say. */
const DEFAULT_SAMPLE_SIZE = 20;
/** Replays per page of listReplays when the request does not say. */
const DEFAULT_PAGE_SIZE = 20;

/**
 * The API side of replays: start one (checks, a snapshot of the candidate, the count of records it
 * will take, one job) and read it. Who may: the scenario operations' one ownership rule.
 */
export class ReplayService {
  constructor(
    private readonly config: ReplayConfig,
    private readonly scenarios: ScenarioAccess & ScenarioVersions,
    private readonly store: ReplayStore,
    private readonly records: RecordedRuns,
    private readonly engine: ScenarioEngine,
    private readonly queue: ExecutionQueue,
    private readonly models: ModelDocuments = NO_MODELS,
  ) {}

  /** `id` is new unless the caller names one: the example seeder does, so the replay ids the spec's examples name exist. */
  async start(
    actor: ScenarioActor,
    requesterId: number,
    scenarioId: string,
    request: StartReplay,
    id = timeOrderedId(),
  ): Promise<ReplayDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    const limit = request.limit ?? this.config.maxRecords;
    if (limit > this.config.maxRecords) {
      throw new BadRequestError(
        `A replay takes at most ${this.config.maxRecords} records on this server (REPLAY_MAX_RECORDS); this one asks for ${limit}.`,
        'VALIDATION_FAILED',
        [{ path: 'body.limit', message: `must be at most ${this.config.maxRecords}` }],
      );
    }
    // Refused early when the limit is reached already; insertWithinLimit below is the check that holds.
    const active = await this.store.activeOf(scenario.ownerId);
    if (active >= this.config.maxActivePerOwner) throw limitReached(scenario.name, active);
    const candidate = await this.scenarios.snapshot(scenario.id, request.candidateVersion);
    if (!candidate) {
      throw new NotFoundError(
        `Scenario "${scenario.name}" has no version "${request.candidateVersion}".`,
        'VERSION_NOT_FOUND',
        [{ path: 'body.candidateVersion', message: 'is not a version of this scenario' }],
      );
    }
    // A candidate that does not compile is refused now (422 COMPILE_ERROR), not found out by the job.
    const resolved = await this.models.resolve(
      scenario.ownerId,
      candidate.document,
      hashCacheKey(candidate.contentHash),
    );
    this.engine.compile(resolved.cacheKey, resolved.document);
    // Records that begin after this moment never join the replay.
    const filter = recordFilter(request.filter ?? {}, new Date());
    const total = await this.records.count(scenario.id, filter, limit);
    const refused = await this.store.insertWithinLimit(
      {
        id,
        scenarioId: scenario.id,
        ownerId: scenario.ownerId,
        requesterId,
        candidate: { label: candidate.label, versionId: candidate.versionId, contentHash: candidate.contentHash },
        document: candidate.document,
        filter,
        outputs: request.outputs,
        limit,
        sampleSize: request.sampleSize ?? DEFAULT_SAMPLE_SIZE,
        total,
      },
      this.config.maxActivePerOwner,
    );
    if (refused !== null) throw limitReached(scenario.name, refused);
    try {
      await this.queue.enqueue<ReplayJobData>(REPLAY_JOB, { replayId: id });
    } catch (error) {
      await this.store.delete(id);
      throw jobStoreUnavailable(error);
    }
    return replayDto((await this.store.find(id)) as ReplayRecord);
  }

  async get(actor: ScenarioActor, scenarioId: string, replayId: string): Promise<ReplayDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    const replay = await this.store.find(replayId);
    if (!replay || replay.scenarioId !== scenario.id) {
      throw new NotFoundError(`Scenario "${scenario.name}" has no replay "${replayId}".`, 'REPLAY_NOT_FOUND');
    }
    return replayDto(replay);
  }

  /**
   * Cancels a QUEUED or RUNNING replay (CANCELLED at once; a worker running it stops at its next page and
   * stores no report). A CANCELLED one is answered as it is; a FINISHED or FAILED one is 409
   * REPLAY_ALREADY_ENDED. `by` (the caller's username) goes into its `error`.
   */
  async cancel(actor: ScenarioActor, by: string, scenarioId: string, replayId: string): Promise<ReplayDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    const replay = await this.store.find(replayId);
    if (!replay || replay.scenarioId !== scenario.id) {
      throw new NotFoundError(`Scenario "${scenario.name}" has no replay "${replayId}".`, 'REPLAY_NOT_FOUND');
    }
    if (!hasEnded(replay.state)) await this.store.cancel(replayId, `Cancelled by ${by}.`);
    // Read again: a worker may have finished it just before the cancel (then it stays FINISHED).
    const now = (await this.store.find(replayId)) as ReplayRecord;
    if (now.state !== 'CANCELLED')
      throw new ConflictError(
        `Replay "${replayId}" is ${now.state}: there is nothing to cancel.`,
        'REPLAY_ALREADY_ENDED',
      );
    return replayDto(now);
  }

  /** The scenario's replays, newest first, a page at a time (`cursor`: the previous page's nextCursor). */
  async list(
    actor: ScenarioActor,
    scenarioId: string,
    cursor: string | undefined,
    limit = DEFAULT_PAGE_SIZE,
  ): Promise<ReplayPageDto> {
    const before = cursor === undefined ? undefined : decodeReplayCursor(cursor);
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    // One more than the page: whether there is a next page, without a count.
    const replays = await this.store.list(scenario.id, before, limit + 1);
    const page = replays.slice(0, limit);
    return {
      replays: page.map(replaySummaryDto),
      nextCursor: replays.length > limit ? encodeReplayCursor(page[page.length - 1].id) : null,
    };
  }
}

/** The browse filter a request names, never reaching past `startedAt`. */
function recordFilter(dto: RequestedRecordFilter, startedAt: Date): RecordFilter {
  const to = dto.to === undefined ? startedAt : new Date(Math.min(dto.to.getTime(), startedAt.getTime()));
  return {
    version: dto.version,
    state: dto.state,
    requestId: dto.requestId,
    from: dto.from,
    to,
    outputs: dto.output,
  };
}

function filterDto(filter: RecordFilter): RecordFilterDto {
  const dto: RecordFilterDto = {};
  if (filter.version !== undefined) dto.version = filter.version;
  if (filter.state !== undefined) dto.state = filter.state;
  if (filter.requestId !== undefined) dto.requestId = filter.requestId;
  if (filter.from !== undefined) dto.from = filter.from.toISOString();
  if (filter.to !== undefined) dto.to = filter.to.toISOString();
  if (filter.outputs !== undefined) dto.output = filter.outputs;
  return dto;
}

function replayDto(replay: ReplayRecord): ReplayDto {
  return { ...replaySummaryFields(replay), report: replay.report };
}

function replaySummaryDto(replay: ReplayListing): ReplayPageDto['replays'][number] {
  return { ...replaySummaryFields(replay), changed: replay.changed };
}

/** The fields a replay and its list entry share. */
function replaySummaryFields(replay: Omit<ReplayRecord, 'report'>): Omit<ReplayDto, 'report'> {
  return {
    replayId: replay.id,
    scenarioId: String(replay.scenarioId),
    candidateVersion: replay.candidate.label,
    state: replay.state,
    total: replay.total,
    done: replay.done,
    failed: replay.failed,
    outputs: replay.outputs,
    filter: filterDto(replay.filter),
    limit: replay.limit,
    sampleSize: replay.sampleSize,
    createdAt: replay.createdAt.toISOString(),
    startedAt: replay.startedAt?.toISOString() ?? null,
    finishedAt: replay.finishedAt?.toISOString() ?? null,
    error: replay.error,
  };
}

function limitReached(scenarioName: string, active: number): ConflictError {
  return new ConflictError(
    `The owner of "${scenarioName}" has ${active} replays queued or running, the most this server runs at once for one owner (REPLAY_MAX_ACTIVE_PER_OWNER); start this one when one of them has ended.`,
    'REPLAY_LIMIT_REACHED',
  );
}
