import { describe, expect, it } from '@jest/globals';
import { availableParallelism } from 'node:os';
import { defaultEngineHosts, defaultHostsPerTenant } from '../../../src/engine/pool/pool-size.js';

// The engine's own defaults, applied when ENGINE_HOSTS / ENGINE_HOSTS_PER_TENANT are unset (config leaves them so).
describe('engine pool size', () => {
  it('sizes the engine hosts to three per core (at least four) and lets one tenant hold a third of them', () => {
    expect(defaultEngineHosts()).toBe(Math.max(4, 3 * availableParallelism()));
    expect(defaultHostsPerTenant(defaultEngineHosts())).toBe(Math.max(1, Math.floor(defaultEngineHosts() / 3)));
    expect(defaultHostsPerTenant(12)).toBe(4);
    expect(defaultHostsPerTenant(2)).toBe(1);
  });
});
