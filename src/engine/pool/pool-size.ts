import { availableParallelism } from 'node:os';

/**
 * Engine hosts by default: three per core, and at least four. More hosts than cores on purpose: a tenant whose
 * runs loop holds at most its cap of hosts, and the operating system shares the cores between its looping hosts
 * and everyone else's, instead of everyone else waiting for a free host (docs/execution.md, "Engine hosts").
 */
export function defaultEngineHosts(): number {
  return Math.max(4, 3 * availableParallelism());
}

/**
 * Hosts one tenant may hold by default: a third of them, at least one. Two looping tenants then leave a third of
 * the hosts free; and a tenant whose batch loops still has a second host for its own scores.
 */
export function defaultHostsPerTenant(hosts: number): number {
  return Math.max(1, Math.floor(hosts / 3));
}
