import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import type { ScenarioPort } from '../engine/ports.js';
import type { NodeProperties, ScenarioDocument } from '../engine/types.js';

/** The latest deployed version of a scenario: what scoring runs. */
export interface DeployedScenario {
  scenarioId: number;
  name: string;
  versionId: number;
  /** The version label (`1`, `2`, …). */
  version: string;
  /** Engine compile-cache key: one per version, never reused. */
  cacheKey: string;
  document: ScenarioDocument;
}

interface DeployedRow {
  scenario_id: number;
  name: string;
  version_id: number;
  version_number: number;
  content: string;
  node_properties: string;
}

/**
 * Finds the latest deployed version of an owner's scenario. Results are cached for `ttlMs`
 * (default 1 s) because every score needs one: a deploy made in this process is visible at
 * once (the scenario service calls `invalidate`); one made by another process within `ttlMs`.
 */
export class DeployedScenarioResolver implements ScenarioPort {
  private readonly cache: LRUCache<string, DeployedScenario | 'none'>;

  constructor(private readonly db: Knex, ttlMs = 1000) {
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(ttlMs, 1) });
  }

  async find(ownerId: number, name: string): Promise<DeployedScenario | null> {
    const key = `${ownerId}\u0000${name}`;
    const cached = this.cache.get(key);
    if (cached) return cached === 'none' ? null : cached;
    const found = await this.load(ownerId, name);
    this.cache.set(key, found ?? 'none');
    return found;
  }

  invalidate(ownerId: number, name: string): void {
    this.cache.delete(`${ownerId}\u0000${name}`);
  }

  async resolveDeployed(request: { ownerId: number; name: string }): Promise<{ cacheKey: string; document: ScenarioDocument } | null> {
    const found = await this.find(request.ownerId, request.name);
    return found ? { cacheKey: found.cacheKey, document: found.document } : null;
  }

  private async load(ownerId: number, name: string): Promise<DeployedScenario | null> {
    const row = (await this.db('scenarios as s')
      .join('scenario_versions as v', 'v.scenario_id', 's.id')
      .where({ 's.owner_id': ownerId, 's.name': name, 'v.status': 'DEPLOYED' })
      .orderBy('v.version_number', 'desc')
      .first('s.id as scenario_id', 's.name', 'v.id as version_id', 'v.version_number', 'v.content', 'v.node_properties')) as DeployedRow | undefined;
    if (!row) return null;
    return {
      scenarioId: row.scenario_id,
      name: row.name,
      versionId: row.version_id,
      version: String(row.version_number),
      cacheKey: `version:${row.version_id}`,
      document: { content: row.content, nodeProperties: JSON.parse(row.node_properties) as Record<string, NodeProperties> },
    };
  }
}
