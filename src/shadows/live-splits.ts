import type { Logger } from 'pino';
import type { RunSplits, SplitArmRun } from '../execution/run-splits.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';
import { hashCacheKey } from '../scenarios/version-content.js';
import { LiveTestCache } from './live-test-cache.js';
import { armAt, splitPoint, type LiveSplit, type SplitRun } from './split.js';
import type { MySqlSplitStore } from './split-store.js';

/** What the live path tells the metrics: a run given to an arm ended. */
export interface SplitMetrics {
  splitRunFinished(arm: 'champion' | 'challenger', outcome: 'succeeded' | 'failed'): void;
}

/** Where split runs go (SplitRunWriter). */
export interface SplitRunSink {
  add(run: SplitRun): void;
}

/** A RUNNING split with its challengers ready to run (model references resolved). */
interface ArmedSplit {
  split: LiveSplit;
  challengers: {
    version: string;
    versionId: number;
    percent: number;
    cacheKey: string;
    document: DeployedScenario['document'];
  }[];
}

export interface LiveSplitsOptions {
  freshMs: number;
  maxStaleMs: number;
  random?: () => number;
}

/**
 * The live path of splits (RunSplits, for execution's ScenarioRunner). A scenario's RUNNING split comes
 * from a cache (fresh 1 s, then stale while read again), never waiting on MySQL: a scenario not in the
 * cache yet is read in the background and its run goes to the champion. A run of the champion version
 * the split was started beside falls at a point in [0, 100) (the sticky input's hash, or at random:
 * splitPoint) and goes to the arm whose share holds it; a challenger runs in the champion's place, with
 * its label as the answer's `version`. Each run's arm, outcome, decision and time go to the writer.
 */
export class LiveSplits implements RunSplits {
  private readonly cache: LiveTestCache<{ armed: ArmedSplit | null }>;
  private readonly random: () => number;

  constructor(
    private readonly store: MySqlSplitStore,
    private readonly writer: SplitRunSink,
    private readonly metrics: SplitMetrics,
    logger: Logger,
    options: LiveSplitsOptions,
    private readonly models: ModelDocuments = NO_MODELS,
  ) {
    this.random = options.random ?? Math.random;
    this.cache = new LiveTestCache((scenarioId) => this.load(scenarioId), options, logger, 'the split of a scenario');
  }

  assign(deployed: DeployedScenario, inputs: Record<string, unknown>): SplitArmRun | undefined {
    const cached = this.cache.peek(deployed.scenarioId);
    if (cached === undefined) return undefined;
    const { armed } = cached;
    // A split runs beside the champion it was started beside only (a deploy ends it: docs/live-tests.md).
    if (armed === null || armed.split.championVersionId !== deployed.versionId) return undefined;
    const { split } = armed;
    const sticky = split.stickyBy === null ? undefined : (inputs[split.stickyBy] ?? null);
    // A sticky split's run without the value goes to the champion: no arm can be kept for it.
    const challenger =
      sticky === null ? undefined : armAt(armed.challengers, splitPoint(split.id, sticky, this.random));
    const ran: DeployedScenario = challenger
      ? {
          ...deployed,
          versionId: challenger.versionId,
          version: challenger.version,
          cacheKey: challenger.cacheKey,
          document: challenger.document,
        }
      : deployed;
    return {
      deployed: ran,
      finished: (result, failed, durationMs) => {
        this.metrics.splitRunFinished(challenger ? 'challenger' : 'champion', failed ? 'failed' : 'succeeded');
        const value = result && Object.hasOwn(result, split.decisionOutput) ? result[split.decisionOutput] : null;
        this.writer.add({
          splitId: split.id,
          arm: ran.version,
          failed,
          decision: failed ? null : typeof value === 'string' ? value : JSON.stringify(value ?? null),
          durationMicros: Math.max(0, Math.round(durationMs * 1000)),
        });
      },
    };
  }

  /** A change made in this process (start, end, promote, a deploy) applies at once here. */
  reload(scenarioId: number): Promise<void> {
    return this.cache.reload(scenarioId);
  }

  /** The scenario's RUNNING split (armed: null when it has none: cached as well). */
  private async load(scenarioId: number): Promise<{ armed: ArmedSplit | null }> {
    const split = await this.store.running(scenarioId);
    if (!split) return { armed: null };
    const challengers = await Promise.all(
      split.challengers.map(async (arm) => {
        const resolved = await this.models.resolve(split.ownerId, arm.document, hashCacheKey(arm.contentHash));
        return {
          version: arm.version,
          versionId: arm.versionId,
          percent: arm.percent,
          cacheKey: resolved.cacheKey,
          document: resolved.document,
        };
      }),
    );
    return { armed: { split, challengers } };
  }
}
