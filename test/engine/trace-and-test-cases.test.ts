import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine } from '../../src/engine/index.js';
import { fakePorts, input, memoryLookups, scenario } from './support/scenario-builder.js';

const engine = new ScenarioEngine({
  ports: fakePorts({
    lookups: memoryLookups({ limits: { indexed: ['segment'], rows: [{ segment: 'A', max: 900 }] } }),
  }),
});
afterAll(() => engine.dispose());

const doc = scenario(
  [
    {
      id: 'start',
      type: 'START',
      name: 'Applicant',
      settings: { inputs: [input('income', 'DOUBLE'), input('segment', 'STRING')] },
    },
    {
      id: 'ratio',
      type: 'SCRIPT',
      name: 'Ratio',
      prefix: 'calc_',
      settings: { language: 'javascript', code: 'ratio = income / 100;', outputs: ['ratio'] },
    },
    {
      id: 'limits',
      type: 'DATA_LOOKUP',
      settings: { collection: 'limits', keyColumn: 'segment', joinVariable: 'segment', mode: 'ONE', output: 'limit' },
    },
    {
      id: 'check',
      type: 'DECISION',
      name: 'Under limit?',
      settings: { language: 'javascript', condition: 'limit !== null && income <= limit.max' },
    },
    { id: 'approve', type: 'END', settings: { outputs: ['calc_ratio'] } },
    { id: 'reject', type: 'END', settings: { outputs: [] } },
  ],
  [
    { from: 'start', to: 'ratio' },
    { from: 'ratio', to: 'limits' },
    { from: 'limits', to: 'check' },
    { from: 'check', to: 'approve', when: true },
    { from: 'check', to: 'reject', when: false },
  ],
);

describe('traces', () => {
  it('lists every executed node in order with what it read and wrote, including host nodes and the branch', async () => {
    const compiled = engine.compile('trace-1', doc);
    const { result, trace } = await engine.run(compiled, { income: 500, segment: 'A' }, { ownerId: 1, trace: true });
    expect(result).toEqual({ calc_ratio: 5 });
    expect(trace?.map(({ durationMicros, ...entry }) => entry)).toEqual([
      { nodeId: 'start', name: 'Applicant', type: 'START', read: {}, wrote: {} },
      { nodeId: 'ratio', name: 'Ratio', type: 'SCRIPT', read: { income: 500 }, wrote: { calc_ratio: 5 } },
      {
        nodeId: 'limits',
        name: 'limits',
        type: 'DATA_LOOKUP',
        read: { segment: 'A' },
        wrote: { limit: { segment: 'A', max: 900 } },
      },
      {
        nodeId: 'check',
        name: 'Under limit?',
        type: 'DECISION',
        read: { limit: { segment: 'A', max: 900 }, income: 500 },
        wrote: {},
        branch: true,
      },
      { nodeId: 'approve', name: 'approve', type: 'END', read: {}, wrote: {} },
    ]);
    expect(trace?.every((t) => typeof t.durationMicros === 'number' && t.durationMicros >= 0)).toBe(true);
  });

  it('leaves the trace out unless asked for', async () => {
    expect(
      await engine.run(engine.compile('trace-1', doc), { income: 500, segment: 'A' }, { ownerId: 1 }),
    ).not.toHaveProperty('trace');
  });
});

describe('test cases', () => {
  it('evaluates each expression with the result variables in scope and `result` as the whole object', async () => {
    const compiled = engine.compile('trace-1', doc);
    const reports = await engine.runTestCases(
      compiled,
      [
        {
          id: 1,
          name: 'approves small incomes',
          variables: { income: 500, segment: 'A' },
          expression: { language: 'javascript', code: 'calc_ratio === 5' },
        },
        {
          id: 2,
          name: 'uses result',
          variables: { income: 500, segment: 'A' },
          expression: { language: 'javascript', code: 'result.calc_ratio > 1 && Object.keys(result).length === 1' },
        },
        {
          id: 3,
          name: 'fails on purpose',
          variables: { income: 5000, segment: 'A' },
          expression: { language: 'javascript', code: 'calc_ratio === 50' },
        },
        {
          id: 4,
          name: 'bad inputs',
          variables: { income: 'x', segment: 'A' },
          expression: { language: 'javascript', code: 'true' },
        },
        { id: 5, name: 'ignored', variables: {}, expression: { language: 'javascript', code: 'true' }, ignore: true },
        {
          id: 6,
          name: 'broken expression',
          variables: { income: 1, segment: 'A' },
          expression: { language: 'javascript', code: 'nope.x' },
        },
      ],
      { ownerId: 1 },
    );
    expect(reports).toEqual([
      { id: 1, name: 'approves small incomes', passed: true, skipped: false, actual: { calc_ratio: 5 } },
      { id: 2, name: 'uses result', passed: true, skipped: false, actual: { calc_ratio: 5 } },
      {
        id: 3,
        name: 'fails on purpose',
        passed: false,
        skipped: false,
        actual: {},
        reason: expect.stringContaining('calc_ratio'),
      },
      {
        id: 4,
        name: 'bad inputs',
        passed: false,
        skipped: false,
        actual: null,
        reason: expect.stringContaining('INPUT_INVALID'),
      },
      { id: 5, name: 'ignored', passed: false, skipped: true, actual: null },
      {
        id: 6,
        name: 'broken expression',
        passed: false,
        skipped: false,
        actual: { calc_ratio: 0.01 },
        reason: expect.stringContaining('ReferenceError'),
      },
    ]);
  });
});
