import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine } from '../../src/engine/index.js';
import { chain, fakePorts, input } from './support/scenario-builder.js';

const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());
let version = 0;

const table = (hitPolicy: string, rules: unknown[], extra: Record<string, unknown> = {}) =>
  chain(
    [input('age', 'INTEGER', false), input('grade', 'STRING', false), input('income', 'DOUBLE', false)],
    [
      {
        id: 'table',
        type: 'DECISION_TABLE',
        settings: {
          hitPolicy,
          inputs: [
            { name: 'age', type: 'NUMBER' },
            { name: 'grade', type: 'STRING' },
            { name: 'monthly', expression: 'income / 12' },
          ],
          outputs: [{ name: 'risk' }, { name: 'limit' }],
          rules,
          ...extra,
        },
      },
    ],
    { outputs: ['risk', 'limit'] },
  );

const run = async (doc: ReturnType<typeof table>, inputs: Record<string, unknown>, trace = false) =>
  engine.run(engine.compile(`table-${++version}`, doc), inputs, { ownerId: 1, trace });

describe('decision table cells', () => {
  const rules = [
    { when: { age: '< 18' }, then: { risk: 'BLOCKED', limit: 0 } },
    { when: { age: '[18..25)', grade: '"A","B"' }, then: { risk: 'LOW', limit: 1000 } },
    { when: { age: '[18..25)', grade: 'in [C, D]' }, then: { risk: 'HIGH', limit: 100 } },
    { when: { age: '>= 25', monthly: '(0..1000]' }, then: { risk: 'MEDIUM', limit: 500 } },
    {
      when: { age: { gte: 25 }, grade: 'A', monthly: '> 1000' },
      then: { risk: 'LOW', limit: { max: 5000, currency: 'EUR' } },
    },
    { when: { age: 'any', grade: { notIn: ['X'] }, monthly: '-' }, then: { risk: 'DEFAULT' } },
    { when: { grade: '= X' }, then: { risk: 'X' } },
  ];
  const cases: [Record<string, unknown>, unknown, unknown][] = [
    [{ age: 16 }, 'BLOCKED', 0],
    [{ age: 18, grade: 'B' }, 'LOW', 1000],
    [{ age: 24, grade: 'D' }, 'HIGH', 100],
    [{ age: 30, income: 12000 }, 'MEDIUM', 500],
    [{ age: 30, grade: 'A', income: 24000 }, 'LOW', { max: 5000, currency: 'EUR' }],
    [{ age: 30, grade: 'B', income: 24000 }, 'DEFAULT', null],
    [{ age: 30, grade: 'X', income: 24000 }, 'X', null],
  ];
  it.each(cases)('maps %j to risk %j and limit %j (hit policy FIRST)', async (inputs, risk, limit) => {
    expect((await run(table('FIRST', rules), inputs)).result).toEqual({ risk, limit });
  });

  it('sets the outputs to null when no rule matches', async () => {
    expect((await run(table('FIRST', [{ when: { age: '> 100' }, then: { risk: 'OLD' } }]), { age: 5 })).result).toEqual(
      { risk: null, limit: null },
    );
  });

  it('reports the matched rules in the trace', async () => {
    const outcome = await run(table('FIRST', rules), { age: 18, grade: 'A' }, true);
    expect(outcome.trace?.find((t) => t.nodeId === 'table')).toMatchObject({
      matchedRules: [1],
      read: { age: 18, grade: 'A', income: null },
      wrote: { risk: 'LOW', limit: 1000 },
    });
  });
});

describe('hit policies', () => {
  const rules = [
    { when: { age: '> 10' }, then: { risk: 'A', limit: 1 } },
    { when: { age: '> 20' }, then: { risk: 'B', limit: 2 } },
    { when: { age: '> 30' }, then: { risk: 'C' } },
  ];

  it('UNIQUE returns the single match', async () => {
    expect((await run(table('UNIQUE', rules), { age: 15 })).result).toEqual({ risk: 'A', limit: 1 });
  });

  it('UNIQUE fails with UNIQUE_HIT_VIOLATION when more than one rule matches', async () => {
    await expect(run(table('UNIQUE', rules), { age: 25 })).rejects.toMatchObject({
      code: 'UNIQUE_HIT_VIOLATION',
      nodeId: 'table',
      message: expect.stringContaining('rules 0 and 1'),
    });
  });

  it('COLLECT turns each output into the list of matched values', async () => {
    expect((await run(table('COLLECT', rules), { age: 35 })).result).toEqual({
      risk: ['A', 'B', 'C'],
      limit: [1, 2, null],
    });
  });

  it('COLLECT gives empty lists when nothing matches', async () => {
    expect((await run(table('COLLECT', rules), { age: 5 })).result).toEqual({ risk: [], limit: [] });
  });

  it('RULE_ORDER lists the matched values in rule order', async () => {
    expect((await run(table('RULE_ORDER', rules), { age: 25 })).result).toEqual({ risk: ['A', 'B'], limit: [1, 2] });
  });
});

describe('expression outputs', () => {
  const rules = [
    { when: { age: '< 18' }, then: { risk: 'BLOCKED', limit: 0 } },
    { when: { grade: 'A' }, then: { risk: 'LOW', limit: { expr: 'income * 3' } } },
    { then: { risk: 'income * 3', limit: { expr: 'Math.min(income, 1000)' } } },
  ];

  it('computes {expr} outputs from the variables and keeps strings as literal text', async () => {
    expect((await run(table('FIRST', rules), { age: 30, grade: 'A', income: 2000 })).result).toEqual({
      risk: 'LOW',
      limit: 6000,
    });
    expect((await run(table('FIRST', rules), { age: 30, grade: 'B', income: 2000 })).result).toEqual({
      risk: 'income * 3',
      limit: 1000,
    });
    expect((await run(table('FIRST', rules), { age: 16, income: 2000 })).result).toEqual({ risk: 'BLOCKED', limit: 0 });
  });

  it('computes an expression only when its rule matches', async () => {
    const throwing = [
      { when: { age: '> 100' }, then: { risk: { expr: 'missingFunction()' } } },
      { then: { risk: 'OK' } },
    ];
    expect((await run(table('FIRST', throwing), { age: 30, income: 1 })).result).toEqual({ risk: 'OK', limit: null });
  });

  it('collects expression values of every matching rule (COLLECT)', async () => {
    const collect = [
      { when: { age: '> 10' }, then: { limit: { expr: 'income' } } },
      { when: { age: '> 20' }, then: { limit: { expr: 'income * 2' } } },
    ];
    expect((await run(table('COLLECT', collect), { age: 25, income: 10 })).result).toEqual({
      risk: [null, null],
      limit: [10, 20],
    });
  });

  it('lists the variables an expression reads in the trace', async () => {
    const outcome = await run(table('FIRST', [{ then: { limit: { expr: 'income * 3' } } }]), { income: 5 }, true);
    expect(outcome.trace?.find((t) => t.nodeId === 'table')).toMatchObject({
      read: { income: 5 },
      wrote: { limit: 15 },
    });
  });

  it('keeps an object with other keys besides expr as a literal', async () => {
    const literal = { expr: 'income', currency: 'EUR' };
    expect((await run(table('FIRST', [{ then: { limit: literal } }]), { income: 5 })).result).toEqual({
      risk: null,
      limit: literal,
    });
  });

  it('fails the run with SCRIPT_ERROR naming the table when an expression throws', async () => {
    await expect(run(table('FIRST', [{ then: { limit: { expr: 'income.toFixed()' } } }]), {})).rejects.toMatchObject({
      code: 'SCRIPT_ERROR',
      nodeId: 'table',
    });
  });

  it('reports syntax errors and expressions that are not text as compile diagnostics at the exact path', () => {
    const compileWith = (then: Record<string, unknown>) => () =>
      engine.compile(`table-${++version}`, table('FIRST', [{ then }]));
    expect(compileWith({ limit: { expr: 'income *' } })).toThrow(
      expect.objectContaining({
        diagnostics: [
          expect.objectContaining({
            code: 'EXPRESSION_SYNTAX_ERROR',
            nodeId: 'table',
            path: 'nodeProperties.table.content.rules[0].then.limit.expr',
          }),
        ],
      }),
    );
    expect(compileWith({ limit: { expr: '' } })).toThrow(
      expect.objectContaining({
        diagnostics: [
          expect.objectContaining({
            code: 'TABLE_CELL_INVALID',
            path: 'nodeProperties.table.content.rules[0].then.limit.expr',
          }),
        ],
      }),
    );
    expect(compileWith({ limit: { expr: 42 } })).toThrow(
      expect.objectContaining({
        diagnostics: [
          expect.objectContaining({
            code: 'TABLE_CELL_INVALID',
            path: 'nodeProperties.table.content.rules[0].then.limit.expr',
          }),
        ],
      }),
    );
  });

  it('runs the expression in the sandbox: no host access', async () => {
    await expect(
      run(
        table('FIRST', [
          { then: { limit: { expr: 'typeof process === "undefined" && typeof require === "undefined" ? 1 : 0' } } },
        ]),
        {},
      ),
    ).resolves.toMatchObject({ result: { limit: 1 } });
    await expect(
      run(table('FIRST', [{ then: { limit: { expr: 'Function("return 1")()' } } }]), {}),
    ).rejects.toMatchObject({ code: 'SCRIPT_ERROR' });
  });
});
