import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine } from '../../src/engine/index.js';
import { chain, fakePorts, input } from './support/scenario-builder.js';

const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());
let version = 0;

const table = (hitPolicy: string, rules: unknown[], extra: Record<string, unknown> = {}) =>
  chain([input('age', 'INTEGER', false), input('grade', 'STRING', false), input('income', 'DOUBLE', false)], [{
    id: 'table', type: 'DECISION_TABLE', settings: {
      hitPolicy,
      inputs: [{ name: 'age', type: 'NUMBER' }, { name: 'grade', type: 'STRING' }, { name: 'monthly', expression: 'income / 12' }],
      outputs: [{ name: 'risk' }, { name: 'limit' }],
      rules, ...extra,
    },
  }], { outputs: ['risk', 'limit'] });

const run = async (doc: ReturnType<typeof table>, inputs: Record<string, unknown>, trace = false) =>
  engine.run(engine.compile(`table-${++version}`, doc), inputs, { ownerId: 1, trace });

describe('decision table cells', () => {
  const rules = [
    { when: { age: '< 18' }, then: { risk: 'BLOCKED', limit: 0 } },
    { when: { age: '[18..25)', grade: '"A","B"' }, then: { risk: 'LOW', limit: 1000 } },
    { when: { age: '[18..25)', grade: 'in [C, D]' }, then: { risk: 'HIGH', limit: 100 } },
    { when: { age: '>= 25', monthly: '(0..1000]' }, then: { risk: 'MEDIUM', limit: 500 } },
    { when: { age: { gte: 25 }, grade: 'A', monthly: '> 1000' }, then: { risk: 'LOW', limit: { max: 5000, currency: 'EUR' } } },
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
    expect((await run(table('FIRST', [{ when: { age: '> 100' }, then: { risk: 'OLD' } }]), { age: 5 })).result).toEqual({ risk: null, limit: null });
  });

  it('reports the matched rules in the trace', async () => {
    const outcome = await run(table('FIRST', rules), { age: 18, grade: 'A' }, true);
    expect(outcome.trace?.find((t) => t.nodeId === 'table')).toMatchObject({ matchedRules: [1], read: { age: 18, grade: 'A', income: null }, wrote: { risk: 'LOW', limit: 1000 } });
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
    await expect(run(table('UNIQUE', rules), { age: 25 })).rejects.toMatchObject({ code: 'UNIQUE_HIT_VIOLATION', nodeId: 'table', message: expect.stringContaining('rules 0 and 1') });
  });

  it('COLLECT turns each output into the list of matched values', async () => {
    expect((await run(table('COLLECT', rules), { age: 35 })).result).toEqual({ risk: ['A', 'B', 'C'], limit: [1, 2, null] });
  });

  it('COLLECT gives empty lists when nothing matches', async () => {
    expect((await run(table('COLLECT', rules), { age: 5 })).result).toEqual({ risk: [], limit: [] });
  });

  it('RULE_ORDER lists the matched values in rule order', async () => {
    expect((await run(table('RULE_ORDER', rules), { age: 25 })).result).toEqual({ risk: ['A', 'B'], limit: [1, 2] });
  });
});
