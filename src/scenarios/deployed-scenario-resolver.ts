import { LRUCache } from 'lru-cache';
import type { NodeProperties, ScenarioDocument, ScenarioPort } from '../engine/index.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { NO_MODELS, type ModelDocuments } from '../models/model-documents.js';
import { deployedCacheKey, type DeployedScenario, type DeployedScenarios } from './deployed-scenarios.js';
import type { ScenarioStore } from './scenario-store.js';

type Lookup = DeployedScenario | 'NOT_FOUND' | 'NOT_DEPLOYED';

/**
 * Finds the latest deployed version of an owner's scenario: for execution (DeployedScenarios) and
 * for the engine's SCENARIO_CALL nodes (ScenarioPort). Answers, misses included, are cached for
 * `ttlMs` (default 1 s) because every score needs one: a deploy made in this process is visible at
 * once (the scenario service calls `invalidate`); one made by another process within `ttlMs`.
 */
export class DeployedScenarioResolver implements DeployedScenarios, ScenarioPort {
  private readonly cache: LRUCache<string, Lookup>;

  /** `models` embeds the models of MODEL nodes; the cached answer holds them, so an upload behind `latest` is seen within `ttlMs`. */
  constructor(private readonly store: ScenarioStore, private readonly models: ModelDocuments = NO_MODELS, ttlMs = 1000) {
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(ttlMs, 1) });
  }

  async require(ownerId: number, name: string): Promise<DeployedScenario> {
    const found = await this.lookup(ownerId, name);
    if (found === 'NOT_DEPLOYED') throw new NotFoundError(`Scenario "${name}" has no deployed version; deploy it first.`, 'SCENARIO_NOT_DEPLOYED');
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

  async resolveDeployed(request: { ownerId: number; name: string }): Promise<{ cacheKey: string; document: ScenarioDocument } | null> {
    const found = await this.find(request.ownerId, request.name);
    return found ? { cacheKey: found.cacheKey, document: found.document } : null;
  }

  private async lookup(ownerId: number, name: string): Promise<Lookup> {
    const key = cacheKey(ownerId, name);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const found = await this.load(ownerId, name);
    this.cache.set(key, found);
    return found;
  }

  private async load(ownerId: number, name: string): Promise<Lookup> {
    const found = await this.store.findLatestDeployedByName(ownerId, name);
    if (!found) return 'NOT_FOUND';
    const { version } = found;
    if (!version) return 'NOT_DEPLOYED';
    const resolved = await this.models.resolve(ownerId, { content: version.content, nodeProperties: JSON.parse(version.nodeProperties) as Record<string, NodeProperties> }, deployedCacheKey(version.id));
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
