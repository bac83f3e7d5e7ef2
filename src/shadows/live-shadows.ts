import type { Logger } from 'pino';
import type { CompiledScenario, PortHooks, ScenarioEngine } from '../engine/index.js';
import type { ChampionRun, RunShadows, SampledShadows } from '../execution/run-shadows.js';
import { toRunError } from '../execution/run-outcome.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import { RecordedCalls } from '../replay/recorded-calls.js';
import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';
import { hashCacheKey } from '../scenarios/version-content.js';
import { ChampionCapture } from './champion-capture.js';
import { LiveTestCache } from './live-test-cache.js';
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

/** A champion run that ended, with the shadows sampled beside it: started on the next turn of the event loop. */
interface Handed {
  shadows: readonly LiveShadow[];
  run: ChampionRun;
  capture: ChampionCapture;
}

/**
 * The live path of shadows (RunShadows, for execution's ScenarioRunner). A scenario's RUNNING shadows
 * come from a cache (LiveTestCache), so a live run never waits on MySQL for them. Each shadow beside the
 * same champion version is sampled at its rate, and skipped at once (counted) when the budget is spent:
 * the champion then runs exactly as without shadows. A sampled champion runs with ChampionCapture as its
 * port hooks; once it has ended (its caller's answer on its way) it is handed over, and the champions
 * handed over in one turn of the event loop start their shadows together on the next (setImmediate, one
 * per turn). Each shadow run takes a place in the budget or is skipped and counted, runs in the engine
 * pool's background lane under the owner's fairness rules (the pool sends one tenant's waiting items to a
 * host as one message), with HTTP_CALL nodes answered from the champion's captures, and its outcome goes
 * to the writer beside the champion's. The budget is charged what the shadows cost this process too: the
 * time of the hand-over turn, of each run's ending, and of writing the rows (ShadowRunWriter). Nothing of
 * a shadow ever reaches the champion's caller: every failure is an outcome.
 */
export class LiveShadows implements RunShadows {
  private readonly cache: LiveTestCache<LiveShadow[]>;
  private readonly compiling = new Map<string, Promise<CompiledScenario>>();
  /** Shadows compiled, for starting a run in the hand-over turn itself (no await before the engine). */
  private readonly compiled = new Map<string, CompiledScenario>();
  private readonly random: () => number;
  private handed: Handed[] = [];

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
    this.cache = new LiveTestCache(
      (scenarioId) => this.store.running(scenarioId),
      options,
      logger,
      'the shadows of a scenario',
    );
  }

  sample(deployed: DeployedScenario): SampledShadows | undefined {
    const shadows = this.cache.peek(deployed.scenarioId);
    if (shadows === undefined || shadows.length === 0) return undefined;
    // Sampling, skipping and counting are shadow work too: charged as the rest (ADR 0028).
    const started = performance.now();
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
    const sampled = picked && new ShadowedRun(this, picked);
    this.budget.charge(performance.now() - started);
    return sampled;
  }

  /** A change made in this process (attach, stop, start, a deploy) applies at once here: the scenario's shadows are read again now. */
  reload(scenarioId: number): Promise<void> {
    return this.cache.reload(scenarioId);
  }

  /** A champion ended: its shadows start on the next turn, with every other champion's of this turn. */
  handOver(handed: Handed): void {
    this.handed.push(handed);
    if (this.handed.length === 1) setImmediate(() => this.startHanded());
  }

  /** Starts the shadow runs handed over in the last turn; never throws. */
  private startHanded(): void {
    const started = performance.now();
    const handed = this.handed;
    this.handed = [];
    for (const { shadows, run, capture } of handed) {
      try {
        this.startShadows(shadows, run, capture);
      } catch (error) {
        this.logger.error({ err: error, runId: run.runId }, 'shadow runs not started');
      }
    }
    this.budget.charge(performance.now() - started);
  }

  /** Starts each shadow of one champion run that finds its place in the budget. */
  private startShadows(shadows: readonly LiveShadow[], run: ChampionRun, capture: ChampionCapture): void {
    let champion: string | undefined;
    for (const shadow of shadows) {
      const refused = this.budget.tryStart(shadow.id);
      if (refused) {
        this.skipped(shadow, refused);
        continue;
      }
      try {
        champion ??= storedJson({ result: run.result, error: run.error && run.maskError(run.error) }, shadow.outputs);
      } catch (error) {
        this.budget.finish(shadow.id, 0);
        throw error;
      }
      this.startOne(shadow, run, capture, champion);
    }
  }

  private skipped(shadow: LiveShadow, reason: SkipReason): void {
    this.metrics.shadowRunSkipped(reason);
    this.writer.skip(shadow.id);
  }

  private startOne(shadow: LiveShadow, run: ChampionRun, capture: ChampionCapture, champion: string): void {
    const started = performance.now();
    const calls = new RecordedCalls(capture.captures);
    // The engine adds the sandbox time of each crossing here (the run's and its called scenarios'): the budget's charge.
    const engineTime = { usedMs: 0, limitMs: this.options.runTimeoutMs };
    const context = { ownerId: run.ownerId, lane: 'background' as const, portHooks: calls, budget: engineTime };
    const compiled = this.compiled.get(shadow.id);
    const running = compiled
      ? this.engine.run(compiled, run.inputs, context)
      : this.compile(shadow).then((ready) => this.engine.run(ready, run.inputs, context));
    running
      .then(
        (outcome) =>
          this.ended(shadow, run, champion, calls, engineTime.usedMs, started, () => ({
            result: outcome.result,
            error: null,
          })),
        (error: unknown) =>
          this.ended(shadow, run, champion, calls, engineTime.usedMs, started, () => ({
            result: null,
            error: run.maskError(toRunError(error)),
          })),
      )
      .catch((error: unknown) => this.logger.error({ err: error, shadowId: shadow.id }, 'shadow run not recorded'));
  }

  /** A shadow run ended: its outcome goes to the writer, and the budget is charged its engine time and this turn's. */
  private ended(
    shadow: LiveShadow,
    run: ChampionRun,
    champion: string,
    calls: RecordedCalls,
    engineMs: number,
    started: number,
    outcomeOf: () => SideOutcome,
  ): void {
    const ending = performance.now();
    try {
      const outcome = outcomeOf();
      this.metrics.shadowRunFinished(outcome.error ? 'failed' : 'succeeded');
      this.writer.add({
        shadowId: shadow.id,
        runId: run.runId,
        requestId: run.requestId,
        beganAt: run.beganAt,
        champion,
        shadow: storedJson(outcome, shadow.outputs),
        calls: { unrecorded: calls.unrecorded, served: calls.served, requestDiffers: calls.requestDiffers },
        durationMicros: Math.round((ending - started) * 1000),
      });
    } finally {
      this.budget.finish(shadow.id, engineMs + (performance.now() - ending));
    }
  }

  /** The shadow compiled once per process (its document is fixed when attached: the content hash names it). */
  private compile(shadow: LiveShadow): Promise<CompiledScenario> {
    let compiling = this.compiling.get(shadow.id);
    if (!compiling) {
      if (this.compiling.size >= MAX_COMPILED) {
        this.compiling.clear();
        this.compiled.clear();
      }
      compiling = this.models
        .resolve(shadow.ownerId, shadow.document, hashCacheKey(shadow.contentHash))
        .then((resolved) => this.engine.compile(resolved.cacheKey, resolved.document));
      compiling.then(
        (compiled) => this.compiled.set(shadow.id, compiled),
        () => this.compiling.delete(shadow.id),
      );
      this.compiling.set(shadow.id, compiling);
    }
    return compiling;
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
    // Started on a later turn of the event loop: the champion's answer is written first (its reply is sent in
    // the promise continuations of this turn).
    this.owner.handOver({ shadows: this.shadows, run, capture: this.capture });
  }
}

/**
 * An outcome as stored, as JSON text (made once: its length is what decides): a result whose JSON passes
 * MAX_STORED_RESULT_CHARS keeps only the compared outputs.
 */
function storedJson(outcome: SideOutcome, outputs: readonly string[]): string {
  const json = JSON.stringify(outcome);
  if (!outcome.result || json.length <= MAX_STORED_RESULT_CHARS) return json;
  const kept: Record<string, unknown> = {};
  for (const name of outputs) if (Object.hasOwn(outcome.result, name)) kept[name] = outcome.result[name];
  return JSON.stringify({ result: kept, error: outcome.error });
}
