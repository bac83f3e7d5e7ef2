import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { StatisticsConfig } from '../config/config.js';
import type { ScenarioAccess } from '../scenarios/scenario-access.js';
import { RunStatisticsRecorder } from './run-statistics-recorder.js';
import { StatisticsService } from './statistics-service.js';
import { StatisticsStore } from './statistics-store.js';

/** What `services.statistics` holds: the recorder every run reports to, and the service behind getScenarioStatistics. */
export interface Statistics {
  recorder: RunStatisticsRecorder;
  service: StatisticsService;
  store: StatisticsStore;
}

export interface StatisticsDependencies {
  config: StatisticsConfig;
  logger: Logger;
  db: Knex;
  /** The scenarios feature's access rule of id-addressed operations. */
  scenarios: ScenarioAccess;
  /** Told how many runs were left out when the recorder's buffer was full (metrics). */
  onDropped?: (runs: number) => void;
}

export function createStatistics(deps: StatisticsDependencies): Statistics {
  const store = new StatisticsStore(deps.db);
  const recorder = new RunStatisticsRecorder(
    store,
    { flushMs: deps.config.flushMs, retentionDays: deps.config.retentionDays },
    deps.logger.child({ component: 'run-statistics' }),
    deps.onDropped,
  );
  return { recorder, store, service: new StatisticsService(deps.scenarios, store) };
}
