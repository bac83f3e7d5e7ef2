import type { components } from '../../generated/api-types.js';
import type { ScenarioEngine } from '../engine/index.js';
import { ConflictError } from '../errors/conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { timeOrderedId } from '../ids/time-ordered-id.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import type { DeployListener } from '../scenarios/deploy-listener.js';
import type { AccessibleScenario, ScenarioAccess, ScenarioActor } from '../scenarios/scenario-access.js';
import type { ScenarioVersions } from '../scenarios/scenario-versions.js';
import { hashCacheKey } from '../scenarios/version-content.js';
import type { LiveShadows } from './live-shadows.js';
import type { ShadowRecord } from './shadow.js';
import type { ShadowReports } from './shadow-reports.js';
import type { MySqlShadowStore } from './shadow-store.js';

type ShadowRequestDto = components['schemas']['ShadowRequest'];
type ShadowDto = components['schemas']['Shadow'];
type ShadowSummaryDto = components['schemas']['ShadowSummary'];

/**
 * The API side of shadows: attach (checks, a snapshot of the shadow version, the champion it runs
 * beside), list, read with the report, stop and start; and, as the scenarios feature's DeployListener,
 * the end of every shadow of a scenario whose champion a deploy replaced. Who may: the scenario
 * operations' one ownership rule.
 */
export class ShadowService implements DeployListener {
  constructor(
    private readonly scenarios: ScenarioAccess & ScenarioVersions,
    private readonly store: MySqlShadowStore,
    private readonly reports: ShadowReports,
    private readonly live: LiveShadows,
    private readonly engine: ScenarioEngine,
    private readonly maxPerScenario: number,
    private readonly models: ModelDocuments = NO_MODELS,
  ) {}

  async attach(
    actor: ScenarioActor,
    createdBy: string,
    scenarioId: string,
    request: ShadowRequestDto,
  ): Promise<ShadowDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    const champion = await this.scenarios.latestDeployed(scenario.id);
    if (!champion)
      throw new NotFoundError(
        `Scenario "${scenario.name}" has no deployed version for a shadow to run beside; deploy it first.`,
        'SCENARIO_NOT_DEPLOYED',
      );
    const shadow = await this.scenarios.snapshot(scenario.id, request.version);
    if (!shadow) {
      throw new NotFoundError(`Scenario "${scenario.name}" has no version "${request.version}".`, 'VERSION_NOT_FOUND', [
        { path: 'body.version', message: 'is not a version of this scenario' },
      ]);
    }
    // A shadow that does not compile is refused now (422 COMPILE_ERROR), not found out by every live run.
    const resolved = await this.models.resolve(scenario.ownerId, shadow.document, hashCacheKey(shadow.contentHash));
    this.engine.compile(resolved.cacheKey, resolved.document);
    const id = timeOrderedId();
    const refused = await this.store.insertWithinLimit(
      {
        id,
        scenarioId: scenario.id,
        ownerId: scenario.ownerId,
        createdBy,
        version: shadow.label,
        versionId: shadow.versionId,
        contentHash: shadow.contentHash,
        document: shadow.document,
        championVersion: champion.label,
        championVersionId: champion.versionId,
        sampleRate: request.sampleRate ?? 1,
        outputs: request.outputs,
      },
      this.maxPerScenario,
    );
    if (refused !== null) {
      throw new ConflictError(
        `Scenario "${scenario.name}" has ${refused} shadows that have not ended, the most this server allows (SHADOW_MAX_PER_SCENARIO); stop one and let a deploy end it, or attach this one later.`,
        'SHADOW_LIMIT_REACHED',
      );
    }
    await this.live.reload(scenario.id);
    return this.withReport(await this.found(scenario, id));
  }

  async list(actor: ScenarioActor, scenarioId: string): Promise<{ shadows: ShadowSummaryDto[] }> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    return { shadows: (await this.store.list(scenario.id)).map(summaryDto) };
  }

  async get(actor: ScenarioActor, scenarioId: string, shadowId: string): Promise<ShadowDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    return this.withReport(await this.found(scenario, shadowId));
  }

  /** RUNNING → STOPPED; a STOPPED or ENDED shadow is answered as it is. */
  async stop(actor: ScenarioActor, scenarioId: string, shadowId: string): Promise<ShadowDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    await this.found(scenario, shadowId);
    await this.store.stop(shadowId);
    await this.live.reload(scenario.id);
    return this.withReport(await this.found(scenario, shadowId));
  }

  /** STOPPED → RUNNING; a RUNNING shadow is answered as it is, an ENDED one is 409 SHADOW_ENDED. */
  async start(actor: ScenarioActor, scenarioId: string, shadowId: string): Promise<ShadowDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    await this.found(scenario, shadowId);
    await this.store.start(shadowId);
    await this.live.reload(scenario.id);
    const now = await this.found(scenario, shadowId);
    if (now.state === 'ENDED')
      throw new ConflictError(
        `Shadow "${shadowId}" ended: ${now.endedReason ?? 'its champion was replaced'}. Attach a new shadow.`,
        'SHADOW_ENDED',
      );
    return this.withReport(now);
  }

  /** A deploy replaced the champion: the scenario's shadows end, their reports frozen as they are. */
  async deployed(scenario: { id: number; name: string }, label: string): Promise<void> {
    await this.store.endAll(scenario.id, `version ${label} was deployed as champion`);
    await this.live.reload(scenario.id);
  }

  private async found(scenario: AccessibleScenario, shadowId: string): Promise<ShadowRecord> {
    const shadow = await this.store.find(shadowId);
    if (!shadow || shadow.scenarioId !== scenario.id)
      throw new NotFoundError(`Scenario "${scenario.name}" has no shadow "${shadowId}".`, 'SHADOW_NOT_FOUND');
    return shadow;
  }

  private async withReport(shadow: ShadowRecord): Promise<ShadowDto> {
    return { ...summaryDto(shadow), report: await this.reports.report(shadow) };
  }
}

function summaryDto(shadow: ShadowRecord): ShadowSummaryDto {
  return {
    shadowId: shadow.id,
    scenarioId: String(shadow.scenarioId),
    version: shadow.version,
    championVersion: shadow.championVersion,
    sampleRate: shadow.sampleRate,
    outputs: shadow.outputs,
    state: shadow.state,
    endedReason: shadow.endedReason,
    skipped: shadow.skipped,
    createdBy: shadow.createdBy,
    createdAt: shadow.createdAt.toISOString(),
    stoppedAt: shadow.stoppedAt?.toISOString() ?? null,
    endedAt: shadow.endedAt?.toISOString() ?? null,
  };
}
