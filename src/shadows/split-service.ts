import type { components } from '../../generated/api-types.js';
import type { ScenarioDocument } from '../engine/index.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { ConflictError } from '../errors/conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { DeployListener } from '../scenarios/deploy-listener.js';
import type { AccessibleScenario, ScenarioActor } from '../scenarios/scenario-access.js';
import type { LiveSplits } from './live-splits.js';
import { checkCompiles, ofScenario, scenarioAndChampion } from './live-test-checks.js';
import { type LiveTestParts, type LiveTestStart, liveTestId } from './live-test-start.js';
import type { NewSplit, SplitRecord } from './split.js';
import type { SplitReports } from './split-reports.js';
import type { MySqlSplitStore } from './split-store.js';

type SplitRequestDto = components['schemas']['SplitRequest'];
type SplitDto = components['schemas']['Split'];
type SplitSummaryDto = components['schemas']['SplitSummary'];

/** Splits listSplits answers, newest first. */
const LIST_LIMIT = 100;

/** What promote needs of the scenarios feature: deploy a document as the next version (ScenarioService.deployDocument). */
export interface ChallengerDeploys {
  deployDocument(
    scenario: { id: number; ownerId: number; name: string },
    document: ScenarioDocument,
    sourceVersion: string,
    description: string,
  ): Promise<string>;
}

/**
 * The API side of champion/challenger splits: start (checks, snapshots of the challengers, the champion
 * they share traffic with), read with the report per arm, end, promote (the challenger deployed as the
 * next version, the split ended); and, as a DeployListener, the end of a scenario's split when a deploy
 * replaces its champion. Who may: the scenario operations' one ownership rule.
 */
export class SplitService implements DeployListener {
  constructor(private readonly parts: SplitParts) {}

  async create(start: LiveTestStart<SplitRequestDto>): Promise<SplitDto> {
    // The champion first: a split of a scenario never deployed is 404 whatever its shares.
    const { scenario, champion } = await scenarioAndChampion(this.parts.scenarios, start, 'to split traffic with');
    const { request } = start;
    const id = liveTestId(start);
    const total = request.challengers.reduce((sum, challenger) => sum + challenger.percent, 0);
    if (!(total < 100)) {
      throw new BadRequestError(
        `The challengers' shares add up to ${total} %: they must leave the champion some traffic (less than 100 %).`,
        'VALIDATION_FAILED',
        [{ path: 'body.challengers', message: 'percentages add up to 100 or more' }],
      );
    }
    const labels = request.challengers.map((challenger) => challenger.version);
    if (new Set(labels).size !== labels.length)
      throw new BadRequestError('Each challenger must be a different version.', 'VALIDATION_FAILED', [
        { path: 'body.challengers', message: 'a version appears twice' },
      ]);
    const challengers: NewSplit['challengers'] = [];
    for (const [index, { version, percent }] of request.challengers.entries()) {
      const snapshot = await this.parts.scenarios.snapshot(scenario.id, version);
      if (!snapshot) {
        throw new NotFoundError(`Scenario "${scenario.name}" has no version "${version}".`, 'VERSION_NOT_FOUND', [
          { path: `body.challengers.${index}.version`, message: 'is not a version of this scenario' },
        ]);
      }
      if (snapshot.versionId === champion.versionId) {
        throw new BadRequestError(
          `Version ${version} is the champion: a challenger must be another version.`,
          'VALIDATION_FAILED',
          [{ path: `body.challengers.${index}.version`, message: 'is the champion' }],
        );
      }
      await checkCompiles(this.parts, scenario.ownerId, snapshot);
      challengers.push({
        version: snapshot.label,
        versionId: snapshot.versionId,
        contentHash: snapshot.contentHash,
        percent,
        document: snapshot.document,
      });
    }
    const running = await this.parts.store.insertUnlessRunning({
      id,
      scenarioId: scenario.id,
      ownerId: scenario.ownerId,
      createdBy: start.createdBy,
      championVersion: champion.label,
      championVersionId: champion.versionId,
      challengers,
      stickyBy: request.stickyBy ?? null,
      decisionOutput: request.decisionOutput,
    });
    if (running !== null)
      throw new ConflictError(
        `Scenario "${scenario.name}" has a running split, "${running}"; end it or promote one of its challengers first.`,
        'SPLIT_EXISTS',
      );
    await this.parts.live.reload(scenario.id);
    return this.withReport(await this.found(scenario, id));
  }

  async list(actor: ScenarioActor, scenarioId: string): Promise<{ splits: SplitSummaryDto[] }> {
    const scenario = await this.parts.scenarios.accessible(actor, scenarioId);
    return { splits: (await this.parts.store.list(scenario.id, LIST_LIMIT)).map(summaryOf) };
  }

  async get(actor: ScenarioActor, scenarioId: string, splitId: string): Promise<SplitDto> {
    const scenario = await this.parts.scenarios.accessible(actor, scenarioId);
    return this.withReport(await this.found(scenario, splitId));
  }

  /** RUNNING → ENDED; an ENDED split is answered as it is. */
  async end(actor: ScenarioActor, endedBy: string, scenarioId: string, splitId: string): Promise<SplitDto> {
    const scenario = await this.parts.scenarios.accessible(actor, scenarioId);
    await this.found(scenario, splitId);
    await this.parts.store.end(splitId, `ended by ${endedBy}`, endedBy);
    await this.parts.live.reload(scenario.id);
    return this.withReport(await this.found(scenario, splitId));
  }

  /**
   * Deploys the challenger as the split ran it (the next numbered version, `split <label>` as its
   * source in the version history), then ends the split with who promoted and the new version. The
   * deploy's own notice (deployed) finds the split ended already.
   */
  async promote(
    actor: ScenarioActor,
    promotedBy: string,
    scenarioId: string,
    splitId: string,
    version: string,
  ): Promise<SplitDto> {
    const scenario = await this.parts.scenarios.accessible(actor, scenarioId);
    const split = await this.found(scenario, splitId);
    if (split.state === 'ENDED')
      throw new ConflictError(
        `Split "${splitId}" ended: ${split.endedReason ?? 'its champion was replaced'}. Start a new split.`,
        'SPLIT_ENDED',
      );
    const index = split.challengers.findIndex((challenger) => challenger.version === version);
    if (index < 0) {
      throw new NotFoundError(`Split "${splitId}" has no challenger "${version}".`, 'VERSION_NOT_FOUND', [
        { path: 'body.version', message: 'is not a challenger of this split' },
      ]);
    }
    const document = (await this.parts.store.documents(splitId))[index] as ScenarioDocument;
    // Ended first: no live run is given to an arm of a split whose champion is about to change.
    if (!(await this.parts.store.end(splitId, `challenger ${version} was promoted`, promotedBy))) {
      throw new ConflictError(`Split "${splitId}" ended meanwhile. Start a new split.`, 'SPLIT_ENDED');
    }
    await this.parts.live.reload(scenario.id);
    const label = await this.parts.deploys.deployDocument(
      scenario,
      document,
      `split ${version}`,
      `Challenger ${version} promoted by ${promotedBy} from split ${splitId}`,
    );
    await this.parts.store.promoted(splitId, label);
    return this.withReport(await this.found(scenario, splitId));
  }

  /** A deploy replaced the champion: the scenario's split ends, its report frozen as it is. */
  async deployed(scenario: { id: number; name: string }, label: string): Promise<void> {
    await this.parts.store.endRunning(scenario.id, `version ${label} was deployed as champion`);
    await this.parts.live.reload(scenario.id);
  }

  private async found(scenario: AccessibleScenario, splitId: string): Promise<SplitRecord> {
    return ofScenario(scenario, await this.parts.store.find(splitId), `split "${splitId}"`, 'SPLIT_NOT_FOUND');
  }

  private async withReport(split: SplitRecord): Promise<SplitDto> {
    return { ...summaryOf(split), report: await this.parts.reports.report(split) };
  }
}

/** A split as the API shows it, without its report. */
function summaryOf(split: SplitRecord): SplitSummaryDto {
  return {
    splitId: split.id,
    scenarioId: String(split.scenarioId),
    championVersion: split.championVersion,
    arms: [
      {
        version: split.championVersion,
        champion: true,
        percent: 100 - split.challengers.reduce((sum, arm) => sum + arm.percent, 0),
      },
      ...split.challengers.map((arm) => ({ version: arm.version, champion: false, percent: arm.percent })),
    ],
    stickyBy: split.stickyBy,
    decisionOutput: split.decisionOutput,
    state: split.state,
    endedReason: split.endedReason,
    promotedVersion: split.promotedVersion,
    createdBy: split.createdBy,
    createdAt: split.createdAt.toISOString(),
    endedBy: split.endedBy,
    endedAt: split.endedAt?.toISOString() ?? null,
  };
}

/** What the split service is built from: the live-test parts, and the deploys a promoted challenger goes through. */
export type SplitParts = LiveTestParts<MySqlSplitStore, SplitReports, LiveSplits> & { deploys: ChallengerDeploys };
