import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine } from '../../src/engine/index.js';
import { chain, fakePorts, input } from './support/scenario-builder.js';

const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());

const card = (extra: Record<string, unknown> = {}) =>
  chain(
    [input('age', 'INTEGER', false), input('housing', 'STRING', false), input('income', 'DOUBLE', false)],
    [
      {
        id: 'card',
        type: 'SCORECARD',
        prefix: 'risk_',
        settings: {
          baseScore: 600,
          characteristics: [
            {
              name: 'Age',
              variable: 'age',
              reasonCode: 'AGE',
              elsePoints: -10,
              bins: [
                { max: 25, points: 0 },
                { min: 25, max: 40, points: 20 },
                { min: 40, points: 35 },
              ],
            },
            {
              name: 'Housing',
              variable: 'housing',
              reasonCode: 'HOUSING',
              elsePoints: 0,
              bins: [
                { values: ['OWN'], points: 30 },
                { values: ['RENT', 'FAMILY'], points: 10 },
              ],
            },
            {
              name: 'Income',
              variable: 'income',
              reasonCode: 'INCOME',
              elsePoints: 0,
              bins: [
                { max: 1000, maxInclusive: true, points: 0 },
                { min: 1000, minInclusive: false, points: 50 },
              ],
            },
          ],
          ...extra,
        },
      },
    ],
  );

describe('SCORECARD', () => {
  const compiled = engine.compile('card-1', card());

  it('adds the points of the matching bins to the base score and writes score and reasonCodes (prefixed)', async () => {
    const { result } = await engine.run(compiled, { age: 45, housing: 'OWN', income: 2000 }, { ownerId: 1 });
    expect(result).toMatchObject({ risk_score: 600 + 35 + 30 + 50, risk_reasonCodes: [] });
  });

  it('ranks reason codes by points lost against each characteristic best bin', async () => {
    const { result } = await engine.run(compiled, { age: 30, housing: 'RENT', income: 1000 }, { ownerId: 1 });
    // lost: income 50, housing 20, age 15
    expect(result).toMatchObject({ risk_score: 600 + 20 + 10 + 0, risk_reasonCodes: ['INCOME', 'HOUSING', 'AGE'] });
  });

  it('uses the else bin for null and unmatched values', async () => {
    const { result } = await engine.run(compiled, { housing: 'BOAT' }, { ownerId: 1 });
    expect(result).toMatchObject({ risk_score: 600 - 10 + 0 + 0, risk_reasonCodes: ['INCOME', 'AGE', 'HOUSING'] });
  });

  it('names the output variables and caps the reason codes as configured', async () => {
    const custom = engine.compile(
      'card-2',
      card({ scoreVariable: 'points', reasonCodesVariable: 'reasons', maxReasonCodes: 1 }),
    );
    const { result } = await engine.run(custom, { age: 30, housing: 'RENT', income: 1000 }, { ownerId: 1 });
    expect(result).toMatchObject({ risk_points: 630, risk_reasons: ['INCOME'] });
  });
});

describe('SCORECARD breakdown and points variables', () => {
  const detailed = engine.compile('card-3', card({ breakdownVariable: 'breakdown' }));

  it('writes, per characteristic in order, the points it gave and the points it lost against its best bin', async () => {
    const { result } = await engine.run(detailed, { age: 30, housing: 'RENT', income: 1000 }, { ownerId: 1 });
    expect(result.risk_breakdown).toEqual([
      { name: 'Age', reasonCode: 'AGE', points: 20, pointsLost: 15 },
      { name: 'Housing', reasonCode: 'HOUSING', points: 10, pointsLost: 20 },
      { name: 'Income', reasonCode: 'INCOME', points: 0, pointsLost: 50 },
    ]);
  });

  it('counts elsePoints as a bin: losing against it, or winning over every bin', async () => {
    const compiled = engine.compile(
      'card-else',
      chain(
        [input('x', 'DOUBLE', false)],
        [
          {
            id: 'card',
            type: 'SCORECARD',
            settings: {
              baseScore: 0,
              breakdownVariable: 'parts',
              characteristics: [{ name: 'X', variable: 'x', elsePoints: 40, bins: [{ min: 0, points: 10 }] }],
            },
          },
        ],
      ),
    );
    expect((await engine.run(compiled, { x: 5 }, { ownerId: 1 })).result).toMatchObject({
      score: 10,
      reasonCodes: ['X'],
      parts: [{ name: 'X', reasonCode: 'X', points: 10, pointsLost: 30 }],
    });
    expect((await engine.run(compiled, {}, { ownerId: 1 })).result).toMatchObject({
      score: 40,
      reasonCodes: [],
      parts: [{ name: 'X', reasonCode: 'X', points: 40, pointsLost: 0 }],
    });
  });

  it("writes each characteristic's points to its pointsVariable (with the node prefix)", async () => {
    const compiled = engine.compile(
      'card-4',
      chain(
        [input('age', 'INTEGER', false), input('member', 'BOOLEAN', false)],
        [
          {
            id: 'card',
            type: 'SCORECARD',
            prefix: 'risk_',
            settings: {
              baseScore: 100,
              characteristics: [
                {
                  name: 'Age',
                  variable: 'age',
                  pointsVariable: 'p_age',
                  elsePoints: 0,
                  bins: [
                    { max: 30, points: 5 },
                    { min: 30, points: 25 },
                  ],
                },
                { name: 'Member', variable: 'member', elsePoints: 0, bins: [{ values: [true], points: 10 }] },
              ],
            },
          },
        ],
      ),
    );
    const { result } = await engine.run(compiled, { age: 42, member: false }, { ownerId: 1 });
    expect(result).toMatchObject({ risk_score: 125, risk_p_age: 25, risk_reasonCodes: ['Member'] });
    expect(result).not.toHaveProperty('risk_p_member');
  });

  it('reports SCORECARD_DUPLICATE_OUTPUT when two outputs name one variable', () => {
    const doc = card({ breakdownVariable: 'score' });
    expect(() => engine.compile('card-dup', doc)).toThrow(
      expect.objectContaining({
        diagnostics: [
          expect.objectContaining({
            code: 'SCORECARD_DUPLICATE_OUTPUT',
            nodeId: 'card',
            path: 'nodeProperties.card.content.breakdownVariable',
          }),
        ],
      }),
    );
  });
});

describe('SCORECARD bins with a range and values', () => {
  const compiled = engine.compile(
    'card-or',
    chain(
      [input('years', 'DOUBLE', false), input('member', 'BOOLEAN', false)],
      [
        {
          id: 'card',
          type: 'SCORECARD',
          settings: {
            baseScore: 0,
            breakdownVariable: 'parts',
            characteristics: [
              {
                name: 'Years employed',
                variable: 'years',
                elsePoints: 0,
                bins: [
                  { min: 0, max: 2, values: [-1], points: 5 }, // 0 <= years < 2, or -1 (not reported)
                  { min: 2, points: 20 },
                ],
              },
              {
                name: 'Member',
                variable: 'member',
                elsePoints: 0,
                bins: [
                  { values: [true], points: 15 },
                  { values: [false], points: 0 },
                ],
              },
            ],
          },
        },
      ],
    ),
  );

  it.each([
    [{ years: 1.5 }, 5],
    [{ years: -1 }, 5],
    [{ years: 3 }, 20],
    [{ years: -2 }, 0],
  ])('matches %j by the range or by the values (either one)', async (given, points) => {
    const { result } = await engine.run(compiled, given, { ownerId: 1 });
    expect((result.parts as Array<{ points: number }>)[0].points).toBe(points);
  });

  it('matches booleans by value', async () => {
    expect((await engine.run(compiled, { member: true }, { ownerId: 1 })).result).toMatchObject({ score: 15 });
    expect((await engine.run(compiled, { member: false }, { ownerId: 1 })).result).toMatchObject({ score: 0 });
  });
});
