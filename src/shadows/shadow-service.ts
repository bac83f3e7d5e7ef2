import type { components } from '../../generated/api-types.js';
import { ConflictError } from '../errors/conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { DeployListener } from '../scenarios/deploy-listener.js';
import type { AccessibleScenario, ScenarioActor } from '../scenarios/scenario-access.js';
import type { VersionSnapshot } from '../scenarios/scenario-versions.js';
import type { LiveShadows } from './live-shadows.js';
import { checkCompiles, ofScenario, scenarioAndChampion } from './live-test-checks.js';
import { type LiveTestParts, type LiveTestStart, liveTestId } from './live-test-start.js';
import type { NewShadow, ShadowRecord } from './shadow.js';
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
  constructor(private readonly parts: ShadowParts) {}

  async attach(start: LiveTestStart<ShadowRequestDto>): Promise<ShadowDto> {
    const { scenario, champion } = await scenarioAndChampion(this.parts.scenarios, start, 'for a shadow to run beside');
    const { request } = start;
    const shadow = await this.parts.scenarios.snapshot(scenario.id, request.version);
    if (!shadow) {
      throw new NotFoundError(`Scenario "${scenario.name}" has no version "${request.version}".`, 'VERSION_NOT_FOUND', [
        { path: 'body.version', message: 'is not a version of this scenario' },
      ]);
    }
    await checkCompiles(this.parts, scenario.ownerId, shadow);
    const attached: NewShadow = {
      ...shadowTerms(liveTestId(start), scenario, start.createdBy, champion, request),
      version: shadow.label,
      versionId: shadow.versionId,
      contentHash: shadow.contentHash,
      document: shadow.document,
    };
    const refused = await this.parts.store.insertWithinLimit(attached, this.parts.maxPerScenario);
    if (refused !== null) {
      throw new ConflictError(
        `Scenario "${scenario.name}" has ${refused} shadows that have not ended, the most this server allows (SHADOW_MAX_PER_SCENARIO); stop one and let a deploy end it, or attach this one later.`,
        'SHADOW_LIMIT_REACHED',
      );
    }
    await this.parts.live.reload(scenario.id);
    return this.withReport(await this.found(scenario, attached.id));
  }

  async list(actor: ScenarioActor, scenarioId: string): Promise<{ shadows: ShadowSummaryDto[] }> {
    const scenario = await this.parts.scenarios.accessible(actor, scenarioId);
    return { shadows: (await this.parts.store.list(scenario.id)).map(summaryDto) };
  }

  async get(actor: ScenarioActor, scenarioId: string, shadowId: string): Promise<ShadowDto> {
    const scenario = await this.parts.scenarios.accessible(actor, scenarioId);
    return this.withReport(await this.found(scenario, shadowId));
  }

  /** RUNNING → STOPPED; a STOPPED or ENDED shadow is answered as it is. */
  async stop(actor: ScenarioActor, scenarioId: string, shadowId: string): Promise<ShadowDto> {
    return this.withReport(await this.change(actor, scenarioId, shadowId, (id) => this.parts.store.stop(id)));
  }

  /** STOPPED → RUNNING; a RUNNING shadow is answered as it is, an ENDED one is 409 SHADOW_ENDED. */
  async start(actor: ScenarioActor, scenarioId: string, shadowId: string): Promise<ShadowDto> {
    const now = await this.change(actor, scenarioId, shadowId, (id) => this.parts.store.start(id));
    if (now.state === 'ENDED')
      throw new ConflictError(
        `Shadow "${shadowId}" ended: ${now.endedReason ?? 'its champion was replaced'}. Attach a new shadow.`,
        'SHADOW_ENDED',
      );
    return this.withReport(now);
  }

  /** A deploy replaced the champion: the scenario's shadows end, their reports frozen as they are. */
  async deployed(scenario: { id: number; name: string }, label: string): Promise<void> {
    await this.parts.store.endAll(scenario.id, `version ${label} was deployed as champion`);
    await this.parts.live.reload(scenario.id);
  }

  /** Changes the shadow's state (stop, start), applies it to this process's live path at once, and answers the shadow as it is now. */
  private async change(
    actor: ScenarioActor,
    scenarioId: string,
    shadowId: string,
    change: (shadowId: string) => Promise<boolean>,
  ): Promise<ShadowRecord> {
    const scenario = await this.parts.scenarios.accessible(actor, scenarioId);
    await this.found(scenario, shadowId);
    await change(shadowId);
    await this.parts.live.reload(scenario.id);
    return this.found(scenario, shadowId);
  }

  private async found(scenario: AccessibleScenario, shadowId: string): Promise<ShadowRecord> {
    return ofScenario(scenario, await this.parts.store.find(shadowId), `shadow "${shadowId}"`, 'SHADOW_NOT_FOUND');
  }

  private async withReport(shadow: ShadowRecord): Promise<ShadowDto> {
    return { ...summaryDto(shadow), report: await this.parts.reports.report(shadow) };
  }
}

/** What attach fixes besides the shadow version: its id, who, the champion it runs beside, sampling and outputs. */
function shadowTerms(
  id: string,
  scenario: AccessibleScenario,
  createdBy: string,
  champion: VersionSnapshot,
  request: ShadowRequestDto,
): Omit<NewShadow, 'version' | 'versionId' | 'contentHash' | 'document'> {
  return {
    id,
    scenarioId: scenario.id,
    ownerId: scenario.ownerId,
    createdBy,
    championVersion: champion.label,
    championVersionId: champion.versionId,
    sampleRate: request.sampleRate ?? 1,
    outputs: request.outputs,
  };
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

/** What the shadow service is built from: the live-test parts, and the most shadows one scenario may have. */
export type ShadowParts = LiveTestParts<MySqlShadowStore, ShadowReports, LiveShadows> & { maxPerScenario: number };
