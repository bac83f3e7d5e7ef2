import type { Knex } from 'knex';
import type { RecordingSettings } from './recording-settings.js';

interface SettingsRow {
  scenario_id: number;
  enabled: number | boolean;
  retention_days: number;
  sync_sample_rate: number;
  trace: number | boolean;
}

function toSettings(row: SettingsRow): RecordingSettings {
  return {
    enabled: Boolean(row.enabled),
    retentionDays: row.retention_days,
    syncSampleRate: Number(row.sync_sample_rate),
    trace: Boolean(row.trace),
  };
}

/** Knex queries on recording_settings: one row per scenario that changed the defaults. */
export class RecordingSettingsStore {
  constructor(private readonly db: Knex) {}

  /** The scenario's stored settings; undefined when it uses the defaults. */
  async find(scenarioId: number): Promise<RecordingSettings | undefined> {
    const row = (await this.db('recording_settings').where('scenario_id', scenarioId).first()) as
      | SettingsRow
      | undefined;
    return row ? toSettings(row) : undefined;
  }

  async save(scenarioId: number, settings: RecordingSettings): Promise<void> {
    const row = {
      enabled: settings.enabled,
      retention_days: settings.retentionDays,
      sync_sample_rate: settings.syncSampleRate,
      trace: settings.trace,
      updated_at: this.db.fn.now(3),
    };
    await this.db('recording_settings')
      .insert({ scenario_id: scenarioId, ...row })
      .onConflict('scenario_id')
      .merge(Object.keys(row));
  }

  /** The retention of every scenario that set one (the others keep records for the default). */
  async retentionDays(): Promise<Map<number, number>> {
    const rows = (await this.db('recording_settings').select('scenario_id', 'retention_days')) as Array<
      Pick<SettingsRow, 'scenario_id' | 'retention_days'>
    >;
    return new Map(rows.map((row) => [row.scenario_id, row.retention_days]));
  }
}
