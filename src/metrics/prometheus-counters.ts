import type { Counter, Registry } from 'prom-client';
import { registeredCounter } from './registered-counter.js';

interface CounterDefinition {
  name: string;
  help: string;
  /** Each label with the values exposed at 0 from the start (see registeredCounter). */
  labels?: Readonly<Record<string, readonly string[]>>;
}

/**
 * The plain counters of PrometheusMetrics, by the name the class uses for each: one table, so adding a counter is
 * one entry and every counter is registered (and its known series zeroed) the same way. Meanings: docs/metrics.md.
 */
const PROMETHEUS_COUNTERS = {
  sandboxLimitFailures: {
    name: 'scoring_sandbox_limit_failures_total',
    help: 'Runs that failed at a sandbox limit (limit: time = TIME_LIMIT_EXCEEDED, memory = MEMORY_LIMIT_EXCEEDED, crash = ENGINE_CRASHED: its engine host died), by owner, scenario and mode.',
    labels: { owner: [], scenario: [], mode: [], limit: [] },
  },
  callbacks: {
    name: 'scoring_callback_deliveries_total',
    help: 'Callback attempts by outcome: delivered (2xx), retrying (failed, another attempt scheduled), failed (failed, retries used up).',
    labels: { outcome: ['delivered', 'retrying', 'failed'] },
  },
  droppedRecords: {
    name: 'scoring_records_dropped_total',
    help: 'Decision records not kept, by reason.',
    labels: { reason: [] },
  },
  recoveredWork: {
    name: 'scoring_recovered_work_total',
    help: 'Stored work found without a pending job and queued again, by kind (runs, chunks, callbacks, replays).',
    labels: { kind: ['runs', 'chunks', 'callbacks', 'replays'] },
  },
  droppedStatistics: {
    name: 'scoring_statistics_dropped_total',
    help: 'Runs left out of the run statistics because their buffer was full while MySQL refused the writes.',
  },
  hostDeaths: {
    name: 'scoring_engine_host_deaths_total',
    help: 'Engine host processes of this process that died (aborted, killed, or killed by their watchdog for a crossing that overran).',
  },
  hostReplacements: {
    name: 'scoring_engine_host_replacements_total',
    help: 'Engine hosts replaced while alive, by reason: memory (resident memory past ENGINE_HOST_MEMORY_MB), unresponsive.',
    labels: { reason: [] },
  },
  crashedRuns: {
    name: 'scoring_engine_crash_items_total',
    help: 'Sandbox work items in an engine host when it died, by outcome: failed (ENGINE_CRASHED, the message that was running, or a second death), requeued (run again on another host).',
    labels: { outcome: [] },
  },
  quarantines: {
    name: 'scoring_engine_quarantines_total',
    help: 'Tenants put in quarantine after their runs killed engine hosts repeatedly (the log names each).',
  },
  shadowRuns: {
    name: 'scoring_shadow_runs_total',
    help: 'Shadow runs beside live runs (docs/live-tests.md), by how the shadow ended: succeeded, failed.',
    labels: { outcome: ['succeeded', 'failed'] },
  },
  shadowSkips: {
    name: 'scoring_shadow_skips_total',
    help: 'Sampled shadow runs not run, by reason: budget (SHADOW_ENGINE_SHARE of engine time spent), in_flight (SHADOW_MAX_IN_FLIGHT reached).',
    labels: { reason: ['budget', 'in_flight'] },
  },
  splitRuns: {
    name: 'scoring_split_runs_total',
    help: 'Live runs of champion/challenger splits (docs/live-tests.md), by arm (champion, challenger) and how they ended (succeeded, failed).',
    labels: { arm: ['champion', 'challenger'], outcome: ['succeeded', 'failed'] },
  },
} as const satisfies Record<string, CounterDefinition>;

type Definitions = typeof PROMETHEUS_COUNTERS;
type LabelsOf<D> = D extends { labels: infer L } ? keyof L & string : never;

/** Each counter of the table, typed by its own labels. */
export type PrometheusCounters = { [K in keyof Definitions]: Counter<LabelsOf<Definitions[K]>> };

/** Registers every counter of PROMETHEUS_COUNTERS in `registry`, in the table's order. */
export function registerPrometheusCounters(registry: Registry): PrometheusCounters {
  const counters: Record<string, Counter<string>> = {};
  for (const [key, definition] of Object.entries<CounterDefinition>(PROMETHEUS_COUNTERS))
    counters[key] = registeredCounter<string>(registry, definition.name, definition.help, definition.labels);
  return counters as PrometheusCounters;
}
