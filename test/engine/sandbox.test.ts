import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine, type ScenarioRunError } from '../../src/engine/index.js';
import { chain, fakePorts, input, script } from './support/scenario-builder.js';

const engine = new ScenarioEngine({ ports: fakePorts(), limits: { timeoutMs: 200, memoryMb: 64 } });
afterAll(() => engine.dispose());
let version = 0;

const healthy = engine.compile(
  'healthy',
  chain(
    [input('a', 'INTEGER')],
    [script('s', 'b = a * 2; probe = ({}).polluted === undefined && [].polluted === undefined;', ['b', 'probe'])],
  ),
);

async function expectFailureThenRecovery(code: string, expectedCode: string | RegExp): Promise<ScenarioRunError> {
  const hostile = engine.compile(`hostile-${++version}`, chain([], [script('evil', code, ['out'])]));
  const error = await engine.run(hostile, {}, { ownerId: 1 }).then(
    (outcome) => {
      throw new Error(`expected a run error, got ${JSON.stringify(outcome.result)}`);
    },
    (e: ScenarioRunError) => e,
  );
  expect(error.name).toBe('ScenarioRunError');
  expect(error.code).toMatch(expectedCode);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect((await engine.run(healthy, { a: 21 }, { ownerId: 1 })).result).toEqual({ a: 21, b: 42, probe: true });
  return error;
}

describe('sandbox', () => {
  it('refuses the Function constructor reached through this.constructor', async () => {
    await expectFailureThenRecovery("out = this.constructor.constructor('return process')();", 'SCRIPT_ERROR');
  });

  it('refuses the Function constructor reached through an object literal', async () => {
    const error = await expectFailureThenRecovery(
      "out = ({}).constructor.constructor('return this')().process;",
      'SCRIPT_ERROR',
    );
    expect(error.message).toMatch(/Code generation from strings is not allowed/);
  });

  it('refuses the constructors of async and generator functions, and eval', async () => {
    await expectFailureThenRecovery("out = (async function () {}).constructor('return 1');", 'SCRIPT_ERROR');
    await expectFailureThenRecovery("out = (function* () {}).constructor('return 1');", 'SCRIPT_ERROR');
    await expectFailureThenRecovery("out = eval('1 + 1');", 'SCRIPT_ERROR');
  });

  it('has no require, process, timers or network in scope', async () => {
    for (const name of ['require', 'process', 'setTimeout', 'fetch', 'module', 'globalThis.process.env']) {
      await expectFailureThenRecovery(`out = ${name}.toString();`, 'SCRIPT_ERROR');
    }
  });

  it('fails prototype pollution and leaves the host and later runs unaffected', async () => {
    await expectFailureThenRecovery('Object.prototype.polluted = 1; out = 1;', 'SCRIPT_ERROR');
    await expectFailureThenRecovery('Array.prototype.polluted = 1; out = 1;', 'SCRIPT_ERROR');
    await expectFailureThenRecovery(
      "Object.defineProperty(Object.prototype, 'polluted', { value: 1 }); out = 1;",
      'SCRIPT_ERROR',
    );
    await expectFailureThenRecovery('({}).__proto__.polluted = 1; out = 1;', 'SCRIPT_ERROR');
    await expectFailureThenRecovery('globalThis.leak = 1; out = 1;', 'SCRIPT_ERROR');
  });

  it('stops an endless loop with TIME_LIMIT_EXCEEDED naming the node', async () => {
    const error = await expectFailureThenRecovery('while (true) {}', 'TIME_LIMIT_EXCEEDED');
    expect(error.message).toMatch(/200 ms/);
    expect(error.nodeId).toBe('evil');
    expect(error.nodeType).toBe('SCRIPT');
  });

  it('turns infinite recursion into a run error', async () => {
    const error = await expectFailureThenRecovery('function f() { return f() + 1; } out = f();', 'SCRIPT_ERROR');
    expect(error.message).toMatch(/call stack/);
  });

  it('fails a run whose values take more than 8 Mi characters of JSON with RESULT_TOO_LARGE, at once (never written out)', async () => {
    // An engine of its own with room in its time limit: what is checked is that the size, not the clock, ends the run.
    const roomy = new ScenarioEngine({ ports: fakePorts(), limits: { timeoutMs: 5000, memoryMb: 64 } });
    try {
      const failure = async (code: string) =>
        roomy
          .run(roomy.compile(`large-${++version}`, chain([], [script('big', code, ['out'])])), {}, { ownerId: 1 })
          .then(
            () => {
              throw new Error('expected RESULT_TOO_LARGE');
            },
            (e: ScenarioRunError) => e,
          );
      await failure('out = "x".repeat(10000000);'); // warms the worker up
      const started = performance.now();
      // 30 M characters fit the isolate's memory, but copied out they would cost the time limit and the host's memory.
      const error = await failure('out = "x".repeat(30000000);');
      expect(performance.now() - started).toBeLessThan(1000);
      expect(error).toMatchObject({
        code: 'RESULT_TOO_LARGE',
        message: expect.stringMatching(/more than 8388608 characters of JSON/),
      });
      // Many small values add up the same way.
      expect(await failure('out = Array.from({ length: 800000 }, (_, i) => ({ key: "v" + i }));')).toMatchObject({
        code: 'RESULT_TOO_LARGE',
      });
      expect(
        (
          await roomy.run(
            roomy.compile('small', chain([], [script('s', 'out = "x".repeat(1000);', ['out'])])),
            {},
            { ownerId: 1 },
          )
        ).result,
      ).toEqual({ out: 'x'.repeat(1000) });
    } finally {
      await roomy.dispose();
    }
  });

  it('fails a huge array allocation with MEMORY_LIMIT_EXCEEDED and recreates the sandbox for the next run', async () => {
    await expectFailureThenRecovery('out = new Array(1e9).fill(1).length;', 'MEMORY_LIMIT_EXCEEDED');
    await expectFailureThenRecovery('const a = []; a.length = 1e9; out = a.fill(1).length;', 'MEMORY_LIMIT_EXCEEDED');
    await expectFailureThenRecovery('out = Array.from({ length: 1e9 }).length;', 'MEMORY_LIMIT_EXCEEDED');
    await expectFailureThenRecovery(
      'const a = []; a[1e9 - 1] = 1; out = a.toReversed().length;',
      'MEMORY_LIMIT_EXCEEDED',
    );
    await expectFailureThenRecovery('const a = []; a[1e9 - 1] = 1; out = a.slice(0).length;', 'MEMORY_LIMIT_EXCEEDED');
  });

  it('fails string doubling with a run error and recovers', async () => {
    await expectFailureThenRecovery(
      "let s = 'x'; while (true) { s = s + s; } out = s;",
      /MEMORY_LIMIT_EXCEEDED|SCRIPT_ERROR|TIME_LIMIT_EXCEEDED/,
    );
  });

  it('keeps already compiled scenarios working after the sandbox was recreated', async () => {
    const before = engine.compile(
      `survivor-${++version}`,
      chain([input('a', 'INTEGER')], [script('s', 'c = a + 1;', ['c'])]),
    );
    await expectFailureThenRecovery(
      'const keep = []; while (true) keep.push(new Array(1e6).fill(1));',
      /MEMORY_LIMIT_EXCEEDED|TIME_LIMIT_EXCEEDED/,
    );
    expect((await engine.run(before, { a: 1 }, { ownerId: 1 })).result).toEqual({ a: 1, c: 2 });
  });

  it('rejects results that are not JSON-like data', async () => {
    await expectFailureThenRecovery('out = function () {};', /RESULT_NOT_SERIALIZABLE/);
  });

  it('is deterministic: Math.random is seeded per run and Date without arguments is refused', async () => {
    const random = engine.compile('random', chain([], [script('s', 'r = [Math.random(), Math.random()];', ['r'])]));
    const first = await engine.run(random, {}, { ownerId: 1 });
    const second = await engine.run(random, {}, { ownerId: 1 });
    expect(first.result).toEqual(second.result);
    await expectFailureThenRecovery('out = Date.now();', 'SCRIPT_ERROR');
    await expectFailureThenRecovery('out = new Date().getTime();', 'SCRIPT_ERROR');
    const dates = engine.compile(
      'dates',
      chain([input('day', 'STRING')], [script('s', 'year = new Date(day).getUTCFullYear();', ['year'])]),
    );
    expect((await engine.run(dates, { day: '2024-05-01' }, { ownerId: 1 })).result).toEqual({
      day: '2024-05-01',
      year: 2024,
    });
  });
});
