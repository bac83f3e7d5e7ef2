import { afterAll, describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import { ScenarioEngine, readPmml, type ModelDocument } from '../../../src/engine/index.js';
import { chain, fakePorts, input, script } from '../support/scenario-builder.js';

/**
 * Conformance: each model scripts/fixtures/make-pmml-models.py trained with scikit-learn, exported as
 * PMML and scored with scikit-learn's own predict / predict_proba, scored again here by the generated
 * JavaScript in a tenant sandbox, through a MODEL node. Zero disagreements: numbers within a relative
 * 1e-9, categories exact.
 */

const FIXTURES = new URL('../../models/fixtures/', import.meta.url);
const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());

interface Expected {
  rows: { inputs: Record<string, unknown>; expected: Record<string, unknown> }[];
}

/**
 * START takes the row as one MAP (so that rows may hold values of the wrong type, to exercise invalid
 * value treatment), a SCRIPT spreads it into variables, the MODEL node scores them.
 */
function modelScenario(model: ModelDocument, outputs: string[]) {
  const fields = model.inputs.map((i) => i.name);
  const doc = chain(
    [input('row', 'MAP')],
    [
      script(
        'spread',
        fields
          .map((f) => `${f} = row[${JSON.stringify(f)}] === undefined ? null : row[${JSON.stringify(f)}];`)
          .join('\n'),
        fields,
      ),
      {
        id: 'model',
        type: 'MODEL',
        settings: { model: 'm', version: 1, outputs: Object.fromEntries(outputs.map((o) => [o, `out_${o}`])) },
      },
    ],
    { outputs: outputs.map((o) => `out_${o}`) },
  );
  return { ...doc, models: { 'm@1': model } };
}

function disagreement(actual: unknown, expected: unknown): string | null {
  if (typeof expected === 'number') {
    if (typeof actual !== 'number') return `expected ${expected}, got ${String(actual)}`;
    const scale = Math.max(Math.abs(expected), Math.abs(actual));
    return actual === expected || Math.abs(actual - expected) <= 1e-9 * scale
      ? null
      : `expected ${expected}, got ${actual}`;
  }
  return actual === expected ? null : `expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** Hand-written models, with outputs worked by hand (a few rows each, each explained); the others are scikit-learn's. */
const HAND_WRITTEN = [
  'mining-missing-regression',
  'mining-missing-votes',
  'mining-model-chain',
  'mining-order-classification',
  'mining-order-regression',
  'mining-outliers',
  'mining-select-first',
  'regression-links',
  'scorecard-baseline-max',
  'scorecard-points-above',
  'scorecard-reasons',
  'targets-classification',
  'targets-regression',
  'transformations',
  'tree-aggregate-nodes',
  'tree-aggregate-nodes-regression',
  'tree-default-child',
  'tree-last-prediction',
  'tree-weighted-confidence',
];

const SCIKIT_LEARN = [
  'credit-scorecard-v1',
  'credit-scorecard-v2',
  'decision-tree-classifier',
  'decision-tree-regressor',
  'gradient-boosting-classifier',
  'gradient-boosting-regressor',
  'linear-regression',
  'logistic-binary',
  'logistic-multinomial',
  'preprocessed-logistic',
  'random-forest-classifier',
  'random-forest-regressor',
];

const names = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.expected.json'))
  .map((f) => f.replace('.expected.json', ''))
  .sort();

describe('PMML conformance against scikit-learn (and a hand-worked scorecard)', () => {
  it('has the fixtures the script writes', () => {
    expect(names).toEqual([...HAND_WRITTEN, ...SCIKIT_LEARN].sort());
  });

  it.each(names)('%s: every scored row agrees', async (name) => {
    const model = readPmml(readFileSync(new URL(`${name}.pmml`, FIXTURES), 'utf8'));
    const { rows } = JSON.parse(readFileSync(new URL(`${name}.expected.json`, FIXTURES), 'utf8')) as Expected;
    // the scikit-learn fixtures have 1,000 rows each (the count); the hand-worked ones a few, each explained
    expect(rows.length).toBeGreaterThanOrEqual(HAND_WRITTEN.includes(name) ? 8 : 1000);
    const outputs = Object.keys(rows[0].expected);
    const compiled = engine.compile(`conformance-${name}`, modelScenario(model, outputs));
    const results = await Promise.all(rows.map((row) => engine.run(compiled, { row: row.inputs }, { ownerId: 1 })));
    const problems: string[] = [];
    results.forEach(({ result }, k) => {
      for (const output of outputs) {
        const problem = disagreement(result[`out_${output}`], rows[k].expected[output]);
        if (problem) problems.push(`row ${k}, ${output}: ${problem}`);
      }
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });
});
