import type { Logger } from 'pino';
import type { CompiledScenario, PortHooks, ScenarioEngine } from '../engine/index.js';
import { StaleWhileRevalidateCache } from '../db/stale-while-revalidate.js';
import type { ChampionRun, RunShadows, SampledShadows } from '../execution/run-shadows.js';
import { toRunError } from '../execution/run-outcome.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import { RecordedCalls } from '../replay/recorded-calls.js';
import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';
import { hashCacheKey } from '../scenarios/version-content.js';
import { ChampionCapture } from './champion-capture.js';
import type { ShadowBudget, SkipReason } from './shadow-budget.js';
import type { ShadowRunWriter } from './shadow-run-writer.js';
import type { LiveShadow, SideOutcome } from './shadow.js';
import type { MySqlShadowStore } from './shadow-store.js';

/** What the live path tells the metrics. */
export interface ShadowMetrics {
  shadowRunFinished(outcome: 'succeeded' | 'failed'): void;
  shadowRunSkipped(reason: SkipReason): void;
}

/** A result whose JSON passes this many characters is stored with the compared outputs only. */
const MAX_STORED_RESULT_CHARS = 64 * 1024;
/** Compiled shadows kept per process. */
const MAX_COMPILED = 200;

export interface LiveShadowsOptions {
  /** How long a scenario's list of RUNNING shadows is used as read (then read again in the background). */
  freshMs: number;
  maxStaleMs: number;
  /** A shadow run's time limit (LIMIT_RUN_TIMEOUT_MS), as every run's. */
  runTimeoutMs: number;
  random?: () => number;
}

/**
 * The live path of shadows (RunShadows, for execution's ScenarioRunner). A scenario's RUNNING shadows
 * come from a cache (fresh 1 s, then stale while read again), so a live run never waits on MySQL for
 * them: a scenario not in the cache yet is read in the background and its run goes unshadowed. Each
 * shadow beside the same champion version is sampled at its rate; the champion then runs with
 * ChampionCapture as its port hooks, and once it has ended (its caller's answer on its way: the shadows
 * start on a later turn of the event loop, setImmediate) each sampled shadow takes a place in the budget
 * (charged the sandbox time the engine measured for it) or is skipped and counted, runs in the engine pool's background lane under the owner's fairness rules,
 * with HTTP_CALL nodes answered from the champion's captures, and its outcome goes to the writer beside
 * the champion's. Nothing of a shadow ever reaches the champion's caller: every failure is an outcome.
 */
export class LiveShadows implements RunShadows {
  private readonly cache: StaleWhileRevalidateCache<number, LiveShadow[]>;
  private readonly compiled = new Map<string, Promise<CompiledScenario>>();
  private readonly random: () => number;

  constructor(
    private readonly store: MySqlShadowStore,
    private readonly engine: ScenarioEngine,
    private readonly budget: ShadowBudget,
    private readonly writer: ShadowRunWriter,
    private readonly metrics: ShadowMetrics,
    private readonly logger: Logger,
    private readonly options: LiveShadowsOptions,
    private readonly models: ModelDocuments = NO_MODELS,
  ) {
    this.random = options.random ?? Math.random;
    this.cache = new StaleWhileRevalidateCache((scenarioId) => this.store.running(scenarioId), {
      freshMs: options.freshMs,
      maxStaleMs: options.maxStaleMs,
      max: 10_000,
      onRefreshError: (error) =>
        this.logger.warn({ err: error }, 'shadows of a scenario could not be read again; using the ones in hand'),
    });
  }

  sample(deployed: DeployedScenario): SampledShadows | undefined {
    const shadows = this.cache.peek(deployed.scenarioId);
    if (shadows === undefined) {
      this.cache
        .get(deployed.scenarioId)
        .catch((error: unknown) => this.logger.warn({ err: error }, 'shadows of a scenario could not be read'));
      return undefined;
    }
    let picked: LiveShadow[] | undefined;
    for (const shadow of shadows) {
      // A shadow runs beside the champion it was attached to only (a deploy ends it: docs/live-tests.md).
      if (shadow.championVersionId !== deployed.versionId) continue;
      if (!(this.random() < shadow.sampleRate)) continue;
      // A spent budget skips at once: the champion then runs exactly as it would without shadows.
      const refused = this.budget.refusal();
      if (refused) {
        this.skipped(shadow, refused);
        continue;
      }
      picked ??= [];
      picked.push(shadow);
    }
    return picked && new ShadowedRun(this, picked);
  }

  /** A change made in this process (attach, stop, start, a deploy) applies at once here: the scenario's shadows are read again now. */
  async reload(scenarioId: number): Promise<void> {
    this.cache.delete(scenarioId);
    await this.cache.get(scenarioId);
  }

  /** Runs each shadow after its champion; never throws. */
  runAll(shadows: readonly LiveShadow[], run: ChampionRun, capture: ChampionCapture): void {
    let champion: SideOutcome | undefined;
    for (const shadow of shadows) {
      const refused = this.budget.tryStart();
      if (refused) {
        this.skipped(shadow, refused);
        continue;
      }
      champion ??= stored({ result: run.result, error: run.error && run.maskError(run.error) }, shadow.outputs);
      this.runOne(shadow, run, capture, champion).catch((error: unknown) =>
        this.logger.error({ err: error, shadowId: shadow.id }, 'shadow run not recorded'),
      );
    }
  }

  private skipped(shadow: LiveShadow, reason: SkipReason): void {
    this.metrics.shadowRunSkipped(reason);
    this.writer.skip(shadow.id);
  }

  private async runOne(
    shadow: LiveShadow,
    run: ChampionRun,
    capture: ChampionCapture,
    champion: SideOutcome,
  ): Promise<void> {
    const started = performance.now();
    const calls = new RecordedCalls(capture.captures);
    // The engine adds the sandbox time of each crossing here (the run's and its called scenarios'): the budget's charge.
    const engineTime = { usedMs: 0, limitMs: this.options.runTimeoutMs };
    let outcome: SideOutcome;
    try {
      const compiled = await this.compile(shadow);
      outcome = {
        result: (
          await this.engine.run(compiled, run.inputs, {
            ownerId: run.ownerId,
            lane: 'background',
            portHooks: calls,
            budget: engineTime,
          })
        ).result,
        error: null,
      };
    } catch (error) {
      outcome = { result: null, error: run.maskError(toRunError(error)) };
    } finally {
      this.budget.finish(engineTime.usedMs);
    }
    this.metrics.shadowRunFinished(outcome.error ? 'failed' : 'succeeded');
    this.writer.add({
      shadowId: shadow.id,
      runId: run.runId,
      requestId: run.requestId,
      beganAt: run.beganAt,
      champion,
      shadow: stored(outcome, shadow.outputs),
      calls: { unrecorded: calls.unrecorded, served: calls.served, requestDiffers: calls.requestDiffers },
      durationMicros: Math.round((performance.now() - started) * 1000),
    });
  }

  /** The shadow compiled once per process (its document is fixed when attached: the content hash names it). */
  private compile(shadow: LiveShadow): Promise<CompiledScenario> {
    let compiled = this.compiled.get(shadow.id);
    if (!compiled) {
      if (this.compiled.size >= MAX_COMPILED) this.compiled.clear();
      compiled = this.models
        .resolve(shadow.ownerId, shadow.document, hashCacheKey(shadow.contentHash))
        .then((resolved) => this.engine.compile(resolved.cacheKey, resolved.document));
      compiled.catch(() => this.compiled.delete(shadow.id));
      this.compiled.set(shadow.id, compiled);
    }
    return compiled;
  }
}

/** The shadows picked for one live run (a class: one object per shadowed run). */
class ShadowedRun implements SampledShadows {
  private readonly capture = new ChampionCapture();

  constructor(
    private readonly owner: LiveShadows,
    private readonly shadows: readonly LiveShadow[],
  ) {}

  hooks(inner: PortHooks | undefined): PortHooks {
    this.capture.inner = inner;
    return this.capture;
  }

  championFinished(run: ChampionRun): void {
    // A later turn of the event loop: the champion's answer is written first (its reply is sent in the
    // promise continuations of this turn).
    setImmediate(() => this.owner.runAll(this.shadows, run, this.capture));
  }
}

/** An outcome as stored: a result too large keeps only the compared outputs. */
function stored(outcome: SideOutcome, outputs: readonly string[]): SideOutcome {
  if (!outcome.result || JSON.stringify(outcome.result).length <= MAX_STORED_RESULT_CHARS) return outcome;
  const kept: Record<string, unknown> = {};
  for (const name of outputs) if (Object.hasOwn(outcome.result, name)) kept[name] = outcome.result[name];
  return { result: kept, error: outcome.error };
}
