import { availableParallelism } from 'node:os';

/**
 * Engine workers by default: one per core, and at least two, because the fairness rule keeps one worker free
 * of any single tenant (with one worker, one tenant's endless loop would hold the only one).
 */
export function defaultEngineWorkers(): number {
  return Math.max(2, availableParallelism());
}
