import { afterAll, describe, expect, it } from '@jest/globals';
import { InputValidationError, ScenarioEngine, type ScenarioRunError } from '../../src/engine/index.js';
import { chain, fakePorts, input, scenario, script } from './support/scenario-builder.js';

const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());
let version = 0;
const compile = (doc: Parameters<ScenarioEngine['compile']>[1]) => engine.compile(`nodes-${++version}`, doc);
const run = (doc: Parameters<ScenarioEngine['compile']>[1], inputs: Record<string, unknown>) =>
  engine.run(compile(doc), inputs, { ownerId: 1 }).then((o) => o.result);

describe('START inputs', () => {
  const inputs = [
    input('name', 'STRING'),
    input('amount', 'DOUBLE'),
    input('count', 'INTEGER'),
    input('flag', 'BOOLEAN'),
    input('color', 'DICTIONARY', true, { name: 'colors', options: ['RED', 'BLUE'] }),
    input('extra', 'MAP'),
    input('list', 'VECTOR'),
    input('note', 'STRING', false),
  ];
  const doc = chain(inputs, []);
  const valid = { name: 'a', amount: 1.5, count: 2, flag: true, color: 'RED', extra: { a: 1 }, list: [1] };

  it('passes inputs of every type through and sets absent optional inputs to null', async () => {
    expect(await run(doc, valid)).toEqual({ ...valid, note: null });
  });

  it('reports every violation at once, each naming its variable', async () => {
    const error = (await run(doc, {
      name: 1,
      amount: Infinity,
      count: 1.5,
      flag: 'yes',
      color: 'GREEN',
      extra: [1],
      list: {},
      bogus: 1,
    }).catch((e: unknown) => e)) as InputValidationError;
    expect(error).toBeInstanceOf(InputValidationError);
    expect(error.code).toBe('INPUT_INVALID');
    expect(error.violations.map((v) => v.variable).sort()).toEqual([
      'amount',
      'bogus',
      'color',
      'count',
      'extra',
      'flag',
      'list',
      'name',
    ]);
  });

  it('reports missing required inputs', async () => {
    const error = (await run(doc, { ...valid, name: undefined, list: null }).catch(
      (e: unknown) => e,
    )) as InputValidationError;
    expect(error.violations).toEqual([
      { variable: 'name', message: 'is required' },
      { variable: 'list', message: 'is required' },
    ]);
  });

  it('runs validators with the inputs in scope and the value as `value`, together with type violations', async () => {
    const validated = scenario(
      [
        {
          id: 'start',
          type: 'START',
          settings: {
            inputs: [input('age', 'INTEGER'), input('limit', 'DOUBLE'), input('kind', 'STRING')],
            validators: [
              { variable: 'age', expression: 'value >= 18', message: 'must be an adult' },
              { variable: 'limit', expression: 'limit <= age * 1000', message: 'is too high for the age' },
            ],
          },
        },
        { id: 'end', type: 'END' },
      ],
      [{ from: 'start', to: 'end' }],
    );
    const error = (await run(validated, { age: 12, limit: 50000, kind: 3 }).catch(
      (e: unknown) => e,
    )) as InputValidationError;
    expect(error.violations).toEqual([
      { variable: 'kind', message: 'must be a string, got number 3' },
      { variable: 'age', message: 'must be an adult' },
      { variable: 'limit', message: 'is too high for the age' },
    ]);
    expect(await run(validated, { age: 30, limit: 100, kind: 'x' })).toEqual({ age: 30, limit: 100, kind: 'x' });
  });
});

describe('END', () => {
  it('returns only the selected outputs, null when unset', async () => {
    const doc = chain([input('a', 'INTEGER')], [script('s', 'b = a + 1;', ['b'])], { outputs: ['b'] });
    expect(await run(doc, { a: 1 })).toEqual({ b: 2 });
  });

  it('returns all set variables, inputs included, by default', async () => {
    const doc = chain([input('a', 'INTEGER')], [script('s', 'b = a + 1;', ['b'])]);
    expect(await run(doc, { a: 1 })).toEqual({ a: 1, b: 2 });
  });
});

describe('SCRIPT', () => {
  it('reads variables by name and keeps only the declared outputs', async () => {
    const doc = chain(
      [input('income', 'DOUBLE'), input('debt', 'DOUBLE')],
      [
        script('ratios', 'const helper = debt / income;\nratio = Math.round(helper * 100) / 100;\nignored = 5;', [
          'ratio',
        ]),
      ],
    );
    const error = (await run(doc, { income: 1000, debt: 250 }).catch((e: unknown) => e)) as ScenarioRunError;
    // `ignored` is not declared: assigning an undeclared name is an error in strict mode
    expect(error.code).toBe('SCRIPT_ERROR');
    expect(error.nodeId).toBe('ratios');
    const fixed = chain(
      [input('income', 'DOUBLE'), input('debt', 'DOUBLE')],
      [script('ratios', 'const helper = debt / income;\nratio = Math.round(helper * 100) / 100;', ['ratio'])],
    );
    expect(await run(fixed, { income: 1000, debt: 250 })).toEqual({ income: 1000, debt: 250, ratio: 0.25 });
  });

  it('lets a script return early and sets unassigned outputs to null', async () => {
    const doc = chain([input('a', 'INTEGER')], [script('s', 'if (a > 0) return;\nb = 1;', ['b'])]);
    expect(await run(doc, { a: 1 })).toEqual({ a: 1, b: null });
  });

  it('adds the node prefix to the variables it defines', async () => {
    const doc = chain([input('a', 'INTEGER')], [script('s', 'total = a * 2;', ['total'], { prefix: 'calc_' })]);
    expect(await run(doc, { a: 4 })).toEqual({ a: 4, calc_total: 8 });
  });

  it('reports a thrown error as SCRIPT_ERROR naming the node', async () => {
    const doc = chain([], [script('boom', 'throw new Error("bad data");', [], { name: 'Boom step' })]);
    await expect(run(doc, {})).rejects.toMatchObject({
      code: 'SCRIPT_ERROR',
      nodeId: 'boom',
      nodeName: 'Boom step',
      nodeType: 'SCRIPT',
      message: expect.stringContaining('bad data'),
    });
  });
});

describe('merge types', () => {
  const docFor = (mergeType: string) =>
    chain(
      [input('x', 'INTEGER', false), input('y', 'INTEGER', false)],
      [
        script('first', 'y = null;', ['y'], { mergeType: 'OVERWRITE_ALL' }),
        script('second', 'x = 10; y = 20; z = 30;', ['x', 'y', 'z'], { mergeType }),
      ],
    );

  it('OVERWRITE_ALL always overwrites', async () => {
    expect(await run(docFor('OVERWRITE_ALL'), { x: 1 })).toEqual({ x: 10, y: 20, z: 30 });
  });

  it('OVERWRITE_NULL overwrites only null or unset variables', async () => {
    expect(await run(docFor('OVERWRITE_NULL'), { x: 1 })).toEqual({ x: 1, y: 20, z: 30 });
  });

  it('OVERWRITE_NONE keeps every variable that was already assigned, even to null', async () => {
    expect(await run(docFor('OVERWRITE_NONE'), { x: 1 })).toEqual({ x: 1, y: null, z: 30 });
  });

  it('OVERWRITE_ERROR fails on a variable that already holds a value, naming node and variable', async () => {
    await expect(run(docFor('OVERWRITE_ERROR'), { x: 1 })).rejects.toMatchObject({
      code: 'MERGE_CONFLICT',
      nodeId: 'second',
      message: expect.stringContaining("'x'"),
    });
    expect(await run(docFor('OVERWRITE_ERROR'), {})).toEqual({ x: 10, y: 20, z: 30 });
  });
});

describe('DECISION', () => {
  const doc = (condition: string) =>
    scenario(
      [
        { id: 'start', type: 'START', settings: { inputs: [input('score', 'INTEGER')] } },
        { id: 'check', type: 'DECISION', name: 'Good score?', settings: { language: 'javascript', condition } },
        {
          id: 'yes',
          type: 'SCRIPT',
          settings: { language: 'javascript', code: 'decision = "approve";', outputs: ['decision'] },
        },
        {
          id: 'no',
          type: 'SCRIPT',
          settings: { language: 'javascript', code: 'decision = "reject";', outputs: ['decision'] },
        },
        { id: 'approved', type: 'END' },
        { id: 'rejected', type: 'END', settings: { outputs: ['decision'] } },
      ],
      [
        { from: 'start', to: 'check' },
        { from: 'check', to: 'yes', when: true },
        { from: 'check', to: 'no', when: false },
        { from: 'yes', to: 'approved' },
        { from: 'no', to: 'rejected' },
      ],
    );

  it('follows the when:true edge and the when:false edge to different END nodes', async () => {
    const compiled = compile(doc('score >= 600'));
    expect((await engine.run(compiled, { score: 700 }, { ownerId: 1 })).result).toEqual({
      score: 700,
      decision: 'approve',
    });
    expect((await engine.run(compiled, { score: 500 }, { ownerId: 1 })).result).toEqual({ decision: 'reject' });
  });

  it('fails with DECISION_NOT_BOOLEAN naming the node when the condition is not boolean', async () => {
    await expect(run(doc('score'), { score: 1 })).rejects.toMatchObject({
      code: 'DECISION_NOT_BOOLEAN',
      nodeId: 'check',
      nodeName: 'Good score?',
    });
  });
});
