import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine, type ScenarioRunError, type CompiledScenario, type RunLane } from '../../src/engine/index.js';
import { chain, fakePorts, input, script } from './support/scenario-builder.js';

// Two workers, one of which a single tenant may hold: the service's layout on a 2-core machine.
const engine = new ScenarioEngine({
  ports: fakePorts(),
  limits: { timeoutMs: 300, memoryMb: 64 },
  pool: { hosts: 2, hostsPerTenant: 1 },
});
afterAll(() => engine.dispose());

const ALICE = 101;
const BOB = 202;
let version = 0;

const compileScript = (code: string, inputs: unknown[] = [], outputs = ['out']): CompiledScenario =>
  engine.compile(`isolation-${++version}`, chain(inputs, [script('s', code, outputs)]));

const resultOf = async (compiled: CompiledScenario, owner: number, inputs: Record<string, unknown> = {}) =>
  (await engine.run(compiled, inputs, { ownerId: owner })).result;

const failureOf = (
  compiled: CompiledScenario,
  owner: number,
  inputs: Record<string, unknown> = {},
): Promise<ScenarioRunError> =>
  engine.run(compiled, inputs, { ownerId: owner }).then(
    (outcome) => {
      throw new Error(`expected a run error, got ${JSON.stringify(outcome.result)}`);
    },
    (error: ScenarioRunError) => error,
  );

describe('no state crosses runs or tenants', () => {
  it('leaves no RegExp statics behind: another tenant, and the same tenant later, read nothing', async () => {
    const matcher = compileScript('const m = /secret-(\\d+)/.exec(text); out = m ? m[1] : null;', [
      input('text', 'STRING'),
    ]);
    const reader = compileScript(
      'out = [RegExp.input, RegExp.lastMatch, RegExp.$1, RegExp["$_"], RegExp["$&"], RegExp.leftContext, RegExp.rightContext, RegExp.lastParen];',
    );
    expect(await resultOf(matcher, ALICE, { text: 'account secret-4711 of alice' })).toMatchObject({ out: '4711' });
    const expected = { out: [null, null, null, null, null, null, null, null] };
    expect(await resultOf(reader, BOB)).toEqual(expected);
    expect(await resultOf(reader, ALICE)).toEqual(expected);
  });

  it('calls scenario code with this undefined, so a run cannot count on it', async () => {
    const counter = compileScript('this.c = (this.c || 0) + 1; out = this.c;');
    const first = await failureOf(counter, ALICE);
    expect(first.code).toBe('SCRIPT_ERROR');
    expect(first.message).toMatch(/TypeError/);
    expect((await failureOf(counter, ALICE)).message).toBe(first.message);
    expect((await failureOf(counter, BOB)).message).toBe(first.message);
    expect(await resultOf(compileScript('out = typeof this;'), ALICE)).toEqual({ out: 'undefined' });
  });

  it('gives decisions, validators and table expressions no this either', async () => {
    const doc = chain(
      [input('a', 'INTEGER')],
      [{ id: 'd', type: 'DECISION', settings: { language: 'javascript', condition: 'this === undefined' } }],
    );
    // DECISION needs two branches: build them by hand
    const graph = JSON.parse(doc.content) as {
      nodes: { id: string; type: string }[];
      edges: { from: string; to: string; when?: boolean }[];
    };
    graph.nodes.push({ id: 'no', type: 'END' });
    graph.edges = [
      { from: 'start', to: 'd' },
      { from: 'd', to: 'end', when: true },
      { from: 'd', to: 'no', when: false },
    ];
    const start = JSON.parse(doc.nodeProperties.start.content) as { inputs: unknown[]; validators?: unknown[] };
    start.validators = [{ variable: 'a', expression: 'this === undefined', message: 'this is defined' }];
    const branching = engine.compile(`isolation-${++version}`, {
      content: JSON.stringify(graph),
      nodeProperties: {
        ...doc.nodeProperties,
        start: { ...doc.nodeProperties.start, content: JSON.stringify(start) },
        end: { id: 'end', type: 'END', content: JSON.stringify({ outputs: ['a'] }) },
      },
    });
    const traced = await engine.run(branching, { a: 1 }, { ownerId: ALICE, trace: true });
    expect(traced.trace?.find((entry) => entry.nodeId === 'd')?.branch).toBe(true);
  });

  it('shares a compilation of identical content between tenants without sharing anything a run can write', async () => {
    const shared = compileScript('const m = /(\\w+)@/.exec(mail); out = [m && m[1], RegExp.$1, typeof this];', [
      input('mail', 'STRING'),
    ]);
    expect(await resultOf(shared, ALICE, { mail: 'alice@example.com' })).toMatchObject({
      out: ['alice', null, 'undefined'],
    });
    expect(await resultOf(shared, BOB, { mail: 'nobody' })).toMatchObject({ out: [null, null, 'undefined'] });
  });

  it('keeps the global object and every intrinsic frozen, however it is reached', async () => {
    const probe = compileScript(`
      const roots = [globalThis, Object.getPrototypeOf(function* () {}), Object.getPrototypeOf(async function () {}),
        Object.getPrototypeOf(async function* () {}), Object.getPrototypeOf([][Symbol.iterator]()), Object.getPrototypeOf(new Map().entries()),
        Object.getPrototypeOf(/a/[Symbol.matchAll]('')), Object.getPrototypeOf(new Intl.Segmenter().segment('')),
        Object.getPrototypeOf(Uint8Array), Object.getPrototypeOf((async function () {})()), Object.getPrototypeOf(function () {}.bind(null)),
        Object.getOwnPropertyDescriptor(Function.prototype, 'caller')?.get];
      const seen = new Set(); const open = []; const stack = roots.map((r, k) => [r, 'root' + k]);
      while (stack.length > 0) {
        const [value, path] = stack.pop();
        if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
        seen.add(value);
        if (!Object.isFrozen(value)) open.push(path);
        for (const key of Reflect.ownKeys(value)) {
          const d = Object.getOwnPropertyDescriptor(value, key);
          const name = path + '.' + String(key);
          if ('value' in d) stack.push([d.value, name]); else { stack.push([d.get, name + '#get']); stack.push([d.set, name + '#set']); }
        }
        stack.push([Object.getPrototypeOf(value), path + '.__proto__']);
      }
      out = { open: open.slice(0, 10), seen: seen.size };`);
    const { out } = (await resultOf(probe, ALICE)) as { out: { open: string[]; seen: number } };
    expect(out.open).toEqual([]);
    expect(out.seen).toBeGreaterThan(500);
  });

  it('lets no run add globals, change prototypes or set Error.prepareStackTrace for later runs', async () => {
    for (const code of [
      'globalThis.shared = 1; out = 1;',
      'Object.prototype.shared = 1; out = 1;',
      'Error.prepareStackTrace = (e, frames) => frames; out = 1;',
      'Error.stackTraceLimit = 0; out = 1;',
      'JSON.parse = () => 1; out = 1;',
      'Math.random = () => 0.5; out = 1;',
      'Symbol.prototype.shared = 1; out = 1;',
      'Object.getPrototypeOf(Uint8Array).prototype.shared = 1; out = 1;',
    ]) {
      expect((await failureOf(compileScript(code), ALICE)).code).toBe('SCRIPT_ERROR');
    }
    const check = compileScript(
      'out = [typeof globalThis.shared, ({}).shared, typeof Error.prepareStackTrace, Error.stackTraceLimit, Math.random() < 1];',
    );
    expect(await resultOf(check, BOB)).toEqual({ out: ['undefined', null, 'undefined', 10, true] });
  });

  it('reseeds Math.random for every run, so no run learns how often others drew', async () => {
    const draw = compileScript('out = Math.random();');
    const burn = compileScript('for (let i = 0; i < 1000; i++) Math.random(); out = 1;');
    const first = await resultOf(draw, ALICE);
    await resultOf(burn, ALICE);
    await resultOf(burn, BOB);
    expect(await resultOf(draw, ALICE)).toEqual(first);
    expect(await resultOf(draw, BOB)).toEqual(first);
  });
});

describe('the clock is unreachable', () => {
  const refused: [string, string][] = [
    ['Date.now()', 'out = Date.now();'],
    ['new Date()', 'out = new Date().getTime();'],
    ['Date()', 'out = Date();'],
    ['Reflect.construct(Date, [])', 'out = Reflect.construct(Date, []).getTime();'],
    [
      'Intl.DateTimeFormat#format()',
      "out = new Intl.DateTimeFormat('en', { hour: 'numeric', minute: 'numeric', second: 'numeric', fractionalSecondDigits: 3 }).format();",
    ],
    ['Intl.DateTimeFormat#format(undefined)', 'out = Intl.DateTimeFormat().format(undefined);'],
    ['a detached format function', "const f = new Intl.DateTimeFormat('en').format; out = f();"],
    ['Intl.DateTimeFormat#formatToParts()', 'out = new Intl.DateTimeFormat().formatToParts();'],
    ['Intl.DateTimeFormat#formatRange', 'out = new Intl.DateTimeFormat().formatRange(undefined, new Date(0));'],
    [
      'Intl.DateTimeFormat#formatRangeToParts',
      'out = new Intl.DateTimeFormat().formatRangeToParts(new Date(0), undefined);',
    ],
    ['toLocaleString of a date made without arguments', 'out = new Date().toLocaleString();'],
  ];
  it.each(refused)('refuses %s', async (_label, code) => {
    const error = await failureOf(compileScript(code), ALICE);
    expect(error.code).toBe('SCRIPT_ERROR');
    expect(error.message).toMatch(/not available: runs are deterministic/);
  });

  it('has no performance, Atomics, SharedArrayBuffer, WebAssembly, timers or weak references', async () => {
    const names = [
      'performance',
      'Atomics',
      'SharedArrayBuffer',
      'WebAssembly',
      'setTimeout',
      'setInterval',
      'queueMicrotask',
      'WeakRef',
      'FinalizationRegistry',
      'process',
      'console',
    ];
    const probe = compileScript(
      `out = ${JSON.stringify(names)}.filter((name) => typeof globalThis[name] !== 'undefined');`,
    );
    expect(await resultOf(probe, ALICE)).toEqual({ out: [] });
  });

  it('still formats dates it is given', async () => {
    const format = compileScript(
      "const f = new Intl.DateTimeFormat('en', { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' }); out = [f.format(new Date(0)), f.formatToParts(0).length > 0, f.formatRange(0, 86400000).replace(/\\s/g, ' ')];",
    );
    expect(await resultOf(format, ALICE)).toEqual({
      out: ['01/01/1970', true, expect.stringMatching(/^0?1\/0?1\/1970 . 0?1\/0?2\/1970$/)],
    });
  });
});

describe('one run failing a limit', () => {
  const looping = () => compileScript('if (n === 7) { while (true) {} } out = n;', [input('n', 'INTEGER')]);
  const bomb = () =>
    compileScript('if (n === 7) { const keep = []; while (true) keep.push(new Array(1e5).fill(n)); } out = n;', [
      input('n', 'INTEGER'),
    ]);

  it('fails alone when it loops among runs batched with it', async () => {
    const compiled = looping();
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, n) => resultOf(compiled, ALICE, { n })));
    outcomes.forEach((outcome, n) => {
      if (n === 7)
        expect(outcome).toMatchObject({ status: 'rejected', reason: { code: 'TIME_LIMIT_EXCEEDED', nodeId: 's' } });
      else expect(outcome).toEqual({ status: 'fulfilled', value: { n, out: n } });
    });
  });

  it('fails alone when it exhausts its memory among runs batched with it', async () => {
    const compiled = bomb();
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, n) => resultOf(compiled, ALICE, { n })));
    outcomes.forEach((outcome, n) => {
      if (n === 7)
        expect(outcome).toMatchObject({
          status: 'rejected',
          reason: { code: expect.stringMatching(/MEMORY_LIMIT_EXCEEDED|TIME_LIMIT_EXCEEDED/) },
        });
      else expect(outcome).toEqual({ status: 'fulfilled', value: { n, out: n } });
    });
  });

  it('keeps the results of runs whose promise jobs never end', async () => {
    const compiled = compileScript(
      'if (n === 3) { (function again() { Promise.resolve().then(again); })(); } out = n;',
      [input('n', 'INTEGER')],
    );
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, n) => resultOf(compiled, ALICE, { n })));
    expect(outcomes).toEqual(Array.from({ length: 10 }, (_, n) => ({ n, out: n })));
  });

  it("never disposes another tenant's sandbox: its state-free work goes on, in order, while the first fails", async () => {
    const heavy = bomb();
    const light = compileScript('out = n * 2;', [input('n', 'INTEGER')]);
    const order: string[] = [];
    const failing = failureOf(heavy, ALICE, { n: 7 }).then((error) => {
      order.push('alice failed');
      return error;
    });
    const bobs = Promise.all(Array.from({ length: 20 }, (_, n) => resultOf(light, BOB, { n }))).then((results) => {
      order.push('bob done');
      return results;
    });
    expect(await bobs).toEqual(Array.from({ length: 20 }, (_, n) => ({ n, out: n * 2 })));
    expect((await failing).code).toMatch(/MEMORY_LIMIT_EXCEEDED|TIME_LIMIT_EXCEEDED/);
    expect(order).toEqual(['bob done', 'alice failed']);
    expect(await resultOf(light, ALICE, { n: 4 })).toEqual({ n: 4, out: 8 });
  });

  it("does not queue another tenant's runs behind its own endless loops", async () => {
    const spinning = looping();
    const light = compileScript('out = n + 1;', [input('n', 'INTEGER')]);
    const order: string[] = [];
    const loops = Array.from({ length: 4 }, () =>
      failureOf(spinning, ALICE, { n: 7 }).then((error) => {
        order.push('alice loop');
        return error;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const bobs = Array.from({ length: 10 }, (_, n) =>
      resultOf(light, BOB, { n }).then((result) => {
        order.push('bob');
        return result;
      }),
    );
    await Promise.all([...loops, ...bobs]);
    // Alice holds one worker for 4 × 300 ms; Bob's runs take the other one and all finish before her second loop ends.
    expect(order.slice(0, 11).filter((entry) => entry === 'bob')).toHaveLength(10);
  });
});

describe('the engine pool lanes: live runs, then validation, then bulk (batch elements), then background (replays)', () => {
  const spinning = () => compileScript('while (true) {} out = 1;');
  /** A run in `lane`, answering its result or its error code. */
  const inLane = (lane: RunLane, compiled: CompiledScenario, owner: number, inputs: Record<string, unknown> = {}) =>
    engine.run(compiled, inputs, { ownerId: owner, lane }).then(
      (outcome) => outcome.result,
      (error: ScenarioRunError) => error.code,
    );

  it.each<RunLane>(['validation', 'bulk', 'background'])(
    "serve the tenant's own live runs before its %s runs, however many it queued first",
    async (lane) => {
      const loops = spinning();
      const light = compileScript('out = n + 1;', [input('n', 'INTEGER')]);
      const order: string[] = [];
      const queued = Array.from({ length: 4 }, () =>
        inLane(lane, loops, ALICE).then((code) => {
          order.push(`${lane} loop`);
          return code;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      const lives = Array.from({ length: 10 }, (_, n) =>
        resultOf(light, ALICE, { n }).then((result) => {
          order.push('live');
          return result;
        }),
      );
      expect(await Promise.all(lives)).toEqual(Array.from({ length: 10 }, (_, n) => ({ n, out: n + 1 })));
      // One cap per tenant across lanes: her live runs wait for the one loop holding her host, never for the other three
      // (in one queue they waited behind all 4 × 300 ms of loops).
      expect(order.slice(0, 11).filter((entry) => entry === 'live')).toHaveLength(10);
      expect(await Promise.all(queued)).toEqual([
        'TIME_LIMIT_EXCEEDED',
        'TIME_LIMIT_EXCEEDED',
        'TIME_LIMIT_EXCEEDED',
        'TIME_LIMIT_EXCEEDED',
      ]);
    },
  );

  it('never give background runs every worker: a live run of another tenant starts at once while two tenants replay endless loops', async () => {
    const loops = spinning();
    const light = compileScript('out = n * 3;', [input('n', 'INTEGER')]);
    const order: string[] = [];
    const queued = [ALICE, BOB, ALICE, BOB].map((owner) =>
      inLane('background', loops, owner).then(() => order.push('background loop')),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const carol = 303;
    const lives = Array.from({ length: 5 }, (_, n) =>
      resultOf(light, carol, { n }).then((result) => {
        order.push('live');
        return result;
      }),
    );
    expect(await Promise.all(lives)).toEqual(Array.from({ length: 5 }, (_, n) => ({ n, out: n * 3 })));
    // Without the cap, Alice's and Bob's loops hold both workers and Carol waits 300 ms for one.
    expect(order.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => 'live'));
    await Promise.all(queued);
  });

  it('give bulk runs every worker while no live run waits (a batch keeps its throughput, unlike a replay)', async () => {
    const loops = spinning();
    const began = Date.now();
    // Two tenants' loops of 300 ms: side by side on both workers, not one after the other.
    expect(await Promise.all([inLane('bulk', loops, ALICE), inLane('bulk', loops, BOB)])).toEqual([
      'TIME_LIMIT_EXCEEDED',
      'TIME_LIMIT_EXCEEDED',
    ]);
    expect(Date.now() - began).toBeLessThan(550);
  });

  it.each<RunLane>(['bulk', 'background'])('give %s runs the same results as live runs', async (lane) => {
    const light = compileScript('out = n - 1;', [input('n', 'INTEGER')]);
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => inLane(lane, light, BOB, { n })));
    expect(results).toEqual(Array.from({ length: 20 }, (_, n) => ({ n, out: n - 1 })));
  });
});
