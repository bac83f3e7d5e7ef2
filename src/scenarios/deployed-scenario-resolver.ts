import { StaleWhileRevalidateCache } from '../db/stale-while-revalidate.js';
import type { NodeProperties, ScenarioDocument, ScenarioPort } from '../engine/index.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import { deployedCacheKey, type DeployedScenario, type DeployedScenarios } from './deployed-scenarios.js';
import type { ScenarioStore } from './scenario-store-type.js';

type Lookup = DeployedScenario | 'NOT_FOUND' | 'NOT_DEPLOYED';

export interface ResolverCacheOptions {
  /** How long an answer is used as it is (1 s). */
  freshMs?: number;
  /** How long past that it is still used while it is read again in the background (SCENARIO_CACHE_STALE_SECONDS). */
  maxStaleMs?: number;
  /** A background read failed (MySQL down): the answer in hand is used until its bound. */
  onRefreshError?: (error: unknown) => void;
}

/**
 * Finds the latest deployed version of an owner's scenario: for execution (DeployedScenarios) and
 * for the engine's SCENARIO_CALL nodes (ScenarioPort). Answers, misses included, are cached because every
 * score needs one, stale-while-revalidate: fresh for `freshMs` (1 s), then served while a background read
 * replaces them, for at most `maxStaleMs` more (60 s). So a score waits for MySQL only for a scenario this
 * process has not resolved lately, and sync scoring rides out a MySQL outage of up to `maxStaleMs`. A deploy
 * made in this process is visible at once (the scenario service calls `invalidate`); one made by another
 * process after `freshMs` plus one read (the first score after `freshMs` still gets the version in hand).
 */
export class DeployedScenarioResolver implements DeployedScenarios, ScenarioPort {
  private readonly cache: StaleWhileRevalidateCache<string, Lookup>;

  /** `models` embeds the models of MODEL nodes; the cached answer holds them, so an upload behind `latest` is seen within `freshMs`. */
  constructor(
    private readonly store: ScenarioStore,
    private readonly models: ModelDocuments = NO_MODELS,
    options: ResolverCacheOptions = {},
  ) {
    this.cache = new StaleWhileRevalidateCache(
      (key) => {
        const split = key.indexOf('\u0000');
        return this.load(Number(key.slice(0, split)), key.slice(split + 1));
      },
      {
        max: 10_000,
        freshMs: Math.max(options.freshMs ?? 1000, 1),
        maxStaleMs: options.maxStaleMs ?? 60_000,
        onRefreshError: options.onRefreshError,
      },
    );
  }

  async require(ownerId: number, name: string): Promise<DeployedScenario> {
    const found = await this.lookup(ownerId, name);
    if (found === 'NOT_DEPLOYED')
      throw new NotFoundError(`Scenario "${name}" has no deployed version; deploy it first.`, 'SCENARIO_NOT_DEPLOYED');
    if (found === 'NOT_FOUND') throw new NotFoundError(`You have no scenario named "${name}".`, 'SCENARIO_NOT_FOUND');
    return found;
  }

  /** The latest deployed version, or null when there is none (whatever the reason). */
  async find(ownerId: number, name: string): Promise<DeployedScenario | null> {
    const found = await this.lookup(ownerId, name);
    return typeof found === 'string' ? null : found;
  }

  invalidate(ownerId: number, name: string): void {
    this.cache.delete(cacheKey(ownerId, name));
  }

  async resolveDeployed(request: {
    ownerId: number;
    name: string;
  }): Promise<{ cacheKey: string; document: ScenarioDocument } | null> {
    const found = await this.find(request.ownerId, request.name);
    return found ? { cacheKey: found.cacheKey, document: found.document } : null;
  }

  private async lookup(ownerId: number, name: string): Promise<Lookup> {
    return (await this.cache.get(cacheKey(ownerId, name))) as Lookup;
  }

  private async load(ownerId: number, name: string): Promise<Lookup> {
    const found = await this.store.findLatestDeployedByName(ownerId, name);
    if (!found) return 'NOT_FOUND';
    const { version } = found;
    if (!version) return 'NOT_DEPLOYED';
    const resolved = await this.models.resolve(
      ownerId,
      {
        content: version.content,
        nodeProperties: JSON.parse(version.nodeProperties) as Record<string, NodeProperties>,
      },
      deployedCacheKey(version.id),
    );
    return {
      scenarioId: found.scenarioId,
      ownerName: found.ownerName,
      ownerId,
      name,
      versionId: version.id,
      version: String(version.versionNumber),
      cacheKey: resolved.cacheKey,
      document: resolved.document,
    };
  }
}

function cacheKey(ownerId: number, name: string): string {
  return `${ownerId}\u0000${name}`;
}
