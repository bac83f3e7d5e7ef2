import type { Logger } from 'pino';
import type { DecisionRecordStore } from './decision-record-store-type.js';
import { DEFAULT_RECORDING_SETTINGS } from './recording-settings.js';
import type { RecordingSettingsStore } from './recording-settings-store.js';
import { PeriodicSweep } from '../db/periodic-sweep.js';

export interface RetentionSweeperOptions {
  /** How often a sweep starts. */
  everyMs: number;
  /** Most records one DELETE removes: short statements, short locks. */
  batchSize?: number;
  /** Pause between two DELETEs, so a large backlog never holds the database for long. */
  pauseMs?: number;
}

const DAY_MS = 86_400_000;

/**
 * Deletes expired decision records in the background: for every scenario that has records, those
 * that began more than its retention (its recording settings, else 30 days) ago, at most `batchSize`
 * per statement with a pause between statements. Runs in worker processes (docs/records.md); several
 * workers sweeping at once only repeat deletes that find nothing.
 */
export class RetentionSweeper {
  private readonly periodic: PeriodicSweep;
  private stopped = false;
  private readonly batchSize: number;
  private readonly pauseMs: number;

  constructor(
    private readonly records: DecisionRecordStore,
    private readonly settings: RecordingSettingsStore,
    options: RetentionSweeperOptions,
    private readonly logger: Logger,
  ) {
    this.batchSize = options.batchSize ?? 5000;
    this.pauseMs = options.pauseMs ?? 100;
    this.periodic = new PeriodicSweep(() => this.sweepOnce(), options.everyMs, (error) => this.logger.error({ err: error }, 'decision record retention sweep failed'));
  }

  start(): void {
    this.stopped = false;
    this.periodic.start();
  }

  stop(): void {
    this.stopped = true;
    this.periodic.stop();
  }

  /** One sweep over every scenario with records; answers how many records it deleted. */
  async sweepOnce(now: Date = new Date()): Promise<number> {
    const retention = await this.settings.retentionDays();
    let deleted = 0;
    for (const scenarioId of await this.records.scenariosWithRecords()) {
      const days = retention.get(scenarioId) ?? DEFAULT_RECORDING_SETTINGS.retentionDays;
      const cutoff = new Date(now.getTime() - days * DAY_MS);
      for (;;) {
        if (this.stopped) return deleted;
        const removed = await this.records.deleteBegunBefore(scenarioId, cutoff, this.batchSize);
        deleted += removed;
        if (removed < this.batchSize) break;
        await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
      }
    }
    if (deleted > 0) this.logger.info({ deleted }, 'deleted expired decision records');
    return deleted;
  }
}
