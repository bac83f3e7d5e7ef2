import type { Knex } from 'knex';
import type { ModelUsage } from '../models/model-usage.js';

interface NodeEntry {
  type?: string;
  content?: unknown;
}

/**
 * ModelUsage over scenario tables: the MODEL nodes of each scenario's latest deployed version (the
 * version execution runs). Only versions whose node properties mention MODEL are read and parsed.
 */
export class DeployedModelReferences implements ModelUsage {
  constructor(private readonly db: Knex) {}

  async scenariosUsing(ownerId: number, model: string, version: number, isNewest: boolean): Promise<string[]> {
    const rows = (await this.db('scenarios as s')
      .join('scenario_versions as v', 'v.scenario_id', 's.id')
      .where({ 's.owner_id': ownerId, 'v.status': 'DEPLOYED' })
      .andWhere(
        'v.version_number',
        this.db('scenario_versions as w')
          .max('w.version_number')
          .where('w.scenario_id', this.db.ref('s.id'))
          .andWhere('w.status', 'DEPLOYED'),
      )
      .andWhere('v.node_properties', 'like', '%MODEL%')
      .orderBy('s.name')
      .select('s.name', 'v.node_properties')) as { name: string; node_properties: string }[];
    return rows.filter((row) => usesModel(row.node_properties, model, version, isNewest)).map((row) => row.name);
  }
}

function usesModel(nodeProperties: string, model: string, version: number, isNewest: boolean): boolean {
  const entries = Object.values(JSON.parse(nodeProperties) as Record<string, NodeEntry>);
  return entries.some((entry) => {
    if (entry.type !== 'MODEL') return false;
    const settings = (typeof entry.content === 'string' ? JSON.parse(entry.content) : entry.content) as {
      model?: string;
      version?: number | string;
    };
    if (settings.model !== model) return false;
    const wanted = settings.version ?? 'latest';
    return wanted === version || (wanted === 'latest' && isNewest);
  });
}
