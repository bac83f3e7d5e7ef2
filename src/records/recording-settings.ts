/** How a scenario's runs are recorded (operations getRecordingSettings / putRecordingSettings; docs/records.md). */
export interface RecordingSettings {
  /** Record runs at all (async and batch runs always when enabled; sync runs as sampled). */
  enabled: boolean;
  /** Records older than this many days are deleted in the background. */
  retentionDays: number;
  /** Share of sync runs recorded, 0 to 1 (async and batch runs are all recorded). */
  syncSampleRate: number;
  /** Keep each recorded run's trace (what every node read and wrote); costs run time and space. */
  trace: boolean;
}

/** What a scenario that never changed its settings gets. */
export const DEFAULT_RECORDING_SETTINGS: Readonly<RecordingSettings> = Object.freeze({
  enabled: true,
  retentionDays: 30,
  syncSampleRate: 1,
  trace: false,
});
