import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine } from '../../../src/engine/index.js';
import { chain, fakePorts, input, script } from '../support/scenario-builder.js';

/**
 * A tenant's queued runs go to its hosts as several messages, so that a host has the next one waiting in its
 * channel while it runs one (engine-pool.ts, batchSize; docs/adr/0027-pipelined-engine-messages.md).
 */
const engine = new ScenarioEngine({ ports: fakePorts(), pool: { hosts: 6, hostsPerTenant: 2, maxBatch: 128 } });
afterAll(() => engine.dispose());

const double = engine.compile('split', chain([input('n', 'INTEGER')], [script('s', 'out = n * 2;', ['out'])]));
const runs = (count: number, owner = 1) =>
  Promise.all(Array.from({ length: count }, (_, n) => engine.run(double, { n }, { ownerId: owner })));

describe('messages to the engine hosts', () => {
  it('spreads 256 queued runs of one tenant over four messages (two hosts, two messages each)', async () => {
    await runs(1);
    const before = engine.poolStats()!.messages;
    const results = await runs(256);
    expect(results.map((r) => r.result.out)).toEqual(Array.from({ length: 256 }, (_, n) => n * 2));
    expect(engine.poolStats()!.messages - before).toBe(4);
  });

  it('sends a few queued runs as one message, as before', async () => {
    const before = engine.poolStats()!.messages;
    const results = await runs(20);
    expect(results.map((r) => r.result.out)).toEqual(Array.from({ length: 20 }, (_, n) => n * 2));
    expect(engine.poolStats()!.messages - before).toBe(1);
  });

  it('keeps a message at maxBatch at most', async () => {
    const before = engine.poolStats()!.messages;
    await runs(1024);
    expect(engine.poolStats()!.messages - before).toBeGreaterThanOrEqual(8);
  });
});
