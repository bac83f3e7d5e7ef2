import type { Logger } from 'pino';
import type { DecisionRecordStore } from './decision-record-store-type.js';
import { DEFAULT_RECORDING_SETTINGS } from './recording-settings.js';
import type { RecordingSettingsStore } from './recording-settings-store.js';
import { BatchedSweeper, daysBefore, type BatchedSweepOptions } from '../db/periodic-sweep.js';

/**
 * Deletes expired decision records in the background: for every scenario that has records, those
 * that began more than its retention (its recording settings, else 30 days) ago, at most `batchSize`
 * per statement with a pause between statements. Runs in worker processes (docs/records.md); several
 * workers sweeping at once only repeat deletes that find nothing.
 */
export class RetentionSweeper extends BatchedSweeper {
  constructor(
    private readonly records: DecisionRecordStore,
    private readonly settings: RecordingSettingsStore,
    options: BatchedSweepOptions,
    logger: Logger,
  ) {
    super(options, 'decision record', logger);
  }

  /** One sweep over every scenario with records; answers how many records it deleted. */
  async sweepOnce(now: Date = new Date()): Promise<number> {
    const retention = await this.settings.retentionDays();
    let deleted = 0;
    for (const scenarioId of await this.records.scenariosWithRecords()) {
      const cutoff = daysBefore(now, retention.get(scenarioId) ?? DEFAULT_RECORDING_SETTINGS.retentionDays);
      deleted += await this.deleteInBatches((limit) => this.records.deleteBegunBefore(scenarioId, cutoff, limit));
      if (this.stopped) return deleted;
    }
    if (deleted > 0) this.logger.info({ deleted }, 'deleted expired decision records');
    return deleted;
  }
}
