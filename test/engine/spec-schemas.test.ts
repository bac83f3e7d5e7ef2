import { describe, expect, it } from '@jest/globals';
import { FULL_REPORT_MAX_VALUES, specSchemas } from '../../src/engine/document/spec-schemas.js';

/** Schema checks of node settings: every problem for documents of a person's size, bounded work for any size. */

const brokenCharacteristics = (count: number) => ({
  baseScore: 1,
  scoreVariable: 's',
  characteristics: Array.from({ length: count }, () => ({ x: 1 })),
});

describe('schema checks of node settings', () => {
  it('report every problem of a small node', () => {
    const problems = specSchemas().settings.SCORECARD(brokenCharacteristics(3), 'card');
    expect(problems.map((problem) => problem.path)).toEqual(
      expect.arrayContaining([
        'card.characteristics[0].name',
        'card.characteristics[0].x',
        'card.characteristics[1].name',
        'card.characteristics[2].bins',
      ]),
    );
  });

  it('report the first problem of a node of 20,000 broken characteristics within a second', () => {
    const started = Date.now();
    const problems = specSchemas().settings.SCORECARD(brokenCharacteristics(20_000), 'card');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(problems).toHaveLength(1);
    expect(problems[0].path).toMatch(/^card\.characteristics\[0\]/);
  });

  it('keep the full report for nodes up to the documented size', () => {
    const fits = Math.floor((FULL_REPORT_MAX_VALUES - 10) / 2);
    expect(specSchemas().settings.SCORECARD(brokenCharacteristics(fits), 'card').length).toBeGreaterThan(fits);
  });
});
