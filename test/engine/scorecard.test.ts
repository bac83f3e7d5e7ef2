import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine } from '../../src/engine/index.js';
import { chain, fakePorts, input } from './support/scenario-builder.js';

const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());

const card = (extra: Record<string, unknown> = {}) => chain([input('age', 'INTEGER', false), input('housing', 'STRING', false), input('income', 'DOUBLE', false)], [{
  id: 'card', type: 'SCORECARD', prefix: 'risk_', settings: {
    baseScore: 600,
    characteristics: [
      { name: 'Age', variable: 'age', reasonCode: 'AGE', elsePoints: -10, bins: [
        { max: 25, points: 0 }, { min: 25, max: 40, points: 20 }, { min: 40, points: 35 }] },
      { name: 'Housing', variable: 'housing', reasonCode: 'HOUSING', elsePoints: 0, bins: [
        { values: ['OWN'], points: 30 }, { values: ['RENT', 'FAMILY'], points: 10 }] },
      { name: 'Income', variable: 'income', reasonCode: 'INCOME', elsePoints: 0, bins: [
        { max: 1000, maxInclusive: true, points: 0 }, { min: 1000, minInclusive: false, points: 50 }] },
    ],
    ...extra,
  },
}]);

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
    const custom = engine.compile('card-2', card({ scoreVariable: 'points', reasonCodesVariable: 'reasons', maxReasonCodes: 1 }));
    const { result } = await engine.run(custom, { age: 30, housing: 'RENT', income: 1000 }, { ownerId: 1 });
    expect(result).toMatchObject({ risk_points: 630, risk_reasons: ['INCOME'] });
  });
});
