import { LRUCache } from 'lru-cache';
import { DEFAULT_RECORDING_SETTINGS, type RecordingSettings } from './recording-settings.js';
import type { RecordingSettingsStore } from './recording-settings-store.js';

/** How long a process reuses a scenario's settings: the longest a change made elsewhere takes to apply. */
const SETTINGS_CACHE_MS = 5000;

/**
 * The recording settings of scenarios, read through a cache because every recorded run needs them:
 * a change made in this process applies at once, one made in another process within 5 s.
 */
export class RecordingSettingsService {
  private readonly cache = new LRUCache<number, Readonly<RecordingSettings>>({ max: 10_000, ttl: SETTINGS_CACHE_MS });

  constructor(private readonly store: RecordingSettingsStore) {}

  /** The settings in effect when this process read them less than 5 s ago; else undefined (ask forScenario). */
  cached(scenarioId: number): Readonly<RecordingSettings> | undefined {
    return this.cache.get(scenarioId);
  }

  /** The settings in effect (the defaults unless the scenario changed them). */
  async forScenario(scenarioId: number): Promise<Readonly<RecordingSettings>> {
    const cached = this.cache.get(scenarioId);
    if (cached) return cached;
    const settings = (await this.store.find(scenarioId)) ?? DEFAULT_RECORDING_SETTINGS;
    this.cache.set(scenarioId, settings);
    return settings;
  }

  async update(scenarioId: number, settings: RecordingSettings): Promise<RecordingSettings> {
    await this.store.save(scenarioId, settings);
    this.cache.delete(scenarioId);
    return settings;
  }
}
