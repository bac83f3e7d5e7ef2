import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine, ScenarioRunError, type ScenarioDocument } from '../../src/engine/index.js';
import { chain, fakePorts, input, script } from './support/scenario-builder.js';

/** A callee that spins through `units` × 200,000 loop iterations. */
const spinning = (units: number): ScenarioDocument =>
  chain(
    [input('n', 'INTEGER')],
    [script('spin', `let x = 0; let i = 0; while (i < ${units} * 200000) { x += i % 7; i++; } out = n;`, ['out'])],
    { outputs: ['out'] },
  );

const LIMIT_MS = 600;

describe('the CPU time limit of a run', () => {
  const deployed: Record<string, ScenarioDocument> = {};
  let version = 0;
  const engine = new ScenarioEngine({
    limits: { timeoutMs: LIMIT_MS },
    ports: fakePorts({
      scenarios: {
        resolveDeployed: async ({ name }) =>
          deployed[name] ? { cacheKey: `dep-${name}-${version}`, document: deployed[name] } : null,
      },
    }),
  });
  afterAll(() => engine.dispose());

  it('covers the scenarios it calls: two calls never use more than one limit between them', async () => {
    // Size the callee so one call takes about 80 % of the limit on this machine, now.
    let units = 10;
    for (let attempt = 0; attempt < 6; attempt++) {
      deployed.busy = spinning(units);
      version += 1;
      const once = engine.compile(
        `once-${units}`,
        chain(
          [input('n', 'INTEGER')],
          [
            {
              id: 'a',
              type: 'SCENARIO_CALL',
              settings: { scenario: 'busy', inputs: { n: 'n' }, outputVariable: 'first' },
            },
          ],
        ),
      );
      await engine.run(once, { n: 1 }, { ownerId: 1, callStack: ['once'] }).catch(() => undefined);
      const started = performance.now();
      const ok = await engine.run(once, { n: 1 }, { ownerId: 1, callStack: ['once'] }).then(
        () => true,
        () => false,
      );
      const took = performance.now() - started;
      if (ok && took > LIMIT_MS * 0.7 && took < LIMIT_MS * 0.9) break;
      units = Math.max(1, Math.round(units * ((LIMIT_MS * 0.8) / Math.max(took, 1))));
    }

    const twice = engine.compile(
      `twice-${units}`,
      chain(
        [input('n', 'INTEGER')],
        [
          {
            id: 'a',
            type: 'SCENARIO_CALL',
            settings: { scenario: 'busy', inputs: { n: 'n' }, outputVariable: 'first' },
          },
          {
            id: 'b',
            type: 'SCENARIO_CALL',
            settings: { scenario: 'busy', inputs: { n: 'n' }, outputVariable: 'second' },
          },
        ],
      ),
    );
    const started = performance.now();
    const outcome = await engine.run(twice, { n: 1 }, { ownerId: 1, callStack: ['twice'] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const took = performance.now() - started;
    if (outcome === undefined) {
      // Only acceptable if this machine happened to run both calls within one limit.
      expect(took).toBeLessThanOrEqual(LIMIT_MS * 1.1);
    } else {
      expect(outcome).toBeInstanceOf(ScenarioRunError);
      expect((outcome as ScenarioRunError).code).toBe('TIME_LIMIT_EXCEEDED');
      expect(took).toBeLessThan(LIMIT_MS * 1.5);
    }
  });
});
