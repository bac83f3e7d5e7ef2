import { StaleWhileRevalidateCache } from '../db/stale-while-revalidate.js';
import { DEFAULT_RECORDING_SETTINGS, type RecordingSettings } from './recording-settings.js';
import type { RecordingSettingsStore } from './recording-settings-store.js';

/** How long a process reuses a scenario's settings: the longest a change made elsewhere takes to apply. */
const SETTINGS_CACHE_MS = 5000;

/**
 * The recording settings of scenarios, read through a cache because every recorded run needs them:
 * a change made in this process applies at once, one made in another process within 5 s (plus one read).
 * Stale-while-revalidate: past 5 s the settings in hand are used while they are read again in the background,
 * for at most `maxStaleMs` more (SCENARIO_CACHE_STALE_SECONDS), so a run waits for MySQL only for a scenario
 * this process has not run lately.
 */
export class RecordingSettingsService {
  private readonly cache: StaleWhileRevalidateCache<number, Readonly<RecordingSettings>>;

  constructor(
    private readonly store: RecordingSettingsStore,
    options: { maxStaleMs?: number; onRefreshError?: (error: unknown) => void } = {},
  ) {
    this.cache = new StaleWhileRevalidateCache(
      async (scenarioId) => (await this.store.find(scenarioId)) ?? DEFAULT_RECORDING_SETTINGS,
      {
        max: 10_000,
        freshMs: SETTINGS_CACHE_MS,
        maxStaleMs: options.maxStaleMs ?? 60_000,
        onRefreshError: options.onRefreshError,
      },
    );
  }

  /** The settings in hand, fresh or stale within the bound (a stale answer is read again in the background); else undefined (ask forScenario). */
  cached(scenarioId: number): Readonly<RecordingSettings> | undefined {
    return this.cache.peek(scenarioId);
  }

  /** The settings in effect (the defaults unless the scenario changed them). */
  async forScenario(scenarioId: number): Promise<Readonly<RecordingSettings>> {
    return (await this.cache.get(scenarioId)) as Readonly<RecordingSettings>;
  }

  async update(scenarioId: number, settings: RecordingSettings): Promise<RecordingSettings> {
    await this.store.save(scenarioId, settings);
    this.cache.delete(scenarioId);
    return settings;
  }
}
