import { availableParallelism } from 'node:os';

/**
 * Engine hosts by default: two per core, and at least four. More hosts than cores on purpose: a tenant whose runs
 * loop holds at most its cap of hosts, and the operating system shares the cores between its looping host and
 * everyone else's, instead of everyone else waiting for a free host (docs/execution.md, "Engine hosts").
 */
export function defaultEngineHosts(): number {
  return Math.max(4, 2 * availableParallelism());
}

/** Hosts one tenant may hold by default: a quarter of them, at least one, so two looping tenants leave half free. */
export function defaultHostsPerTenant(hosts: number): number {
  return Math.max(1, Math.floor(hosts / 4));
}
