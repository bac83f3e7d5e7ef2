import { afterAll, describe, expect, it } from '@jest/globals';
import { ModelFileError, ScenarioEngine, readPmml, type ModelDocument } from '../../../src/engine/index.js';
import { chain, fakePorts, input, script } from '../support/scenario-builder.js';

/** PMML semantics worked by hand on small models: tree strategies, segmentation, refusals, hostile files. */

const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());
let counter = 0;

const pmml = (dictionary: string, model: string) =>
  `<?xml version="1.0"?><PMML xmlns="http://www.dmg.org/PMML-4_4" version="4.4"><Header/><DataDictionary>${dictionary}</DataDictionary>${model}</PMML>`;
const xy =
  '<DataField name="x" optype="continuous" dataType="double"/><DataField name="y" optype="continuous" dataType="double"/><DataField name="t" optype="continuous" dataType="double"/>';
const schemaXY =
  '<MiningSchema><MiningField name="x"/><MiningField name="y"/><MiningField name="t" usageType="target"/></MiningSchema>';

/** Scores `rows` through a MODEL node; each row is a MAP spread into the model's inputs (so values may be of any type). */
async function score(
  model: ModelDocument,
  rows: Record<string, unknown>[],
  outputs = model.outputs.map((o) => o.name),
) {
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
        settings: { model: 'm', outputs: Object.fromEntries(outputs.map((o) => [o, `o_${o.replace(/\W/g, '_')}`])) },
      },
    ],
  );
  const compiled = engine.compile(`semantics-${++counter}`, { ...doc, models: { 'm@latest': model } });
  const results = await Promise.all(rows.map((row) => engine.run(compiled, { row }, { ownerId: 1 })));
  return results.map(({ result }) => Object.fromEntries(outputs.map((o) => [o, result[`o_${o.replace(/\W/g, '_')}`]])));
}

const tree = (missingValueStrategy: string, noTrueChildStrategy = 'returnNullPrediction') =>
  readPmml(
    pmml(
      xy,
      `
  <TreeModel functionName="regression" missingValueStrategy="${missingValueStrategy}" noTrueChildStrategy="${noTrueChildStrategy}">${schemaXY}
    <Node id="root" score="0" defaultChild="right"><True/>
      <Node id="never" score="-1"><False/></Node>
      <Node id="left" score="1" defaultChild="left-high"><SimplePredicate field="x" operator="lessThan" value="10"/>
        <Node id="left-low" score="11"><SimplePredicate field="y" operator="lessThan" value="5"/></Node>
        <Node id="left-high" score="12"><SimplePredicate field="y" operator="greaterOrEqual" value="5"/></Node>
      </Node>
      <Node id="right" score="2"><SimplePredicate field="x" operator="greaterOrEqual" value="10"/></Node>
    </Node>
  </TreeModel>`,
    ),
  );

describe('TreeModel', () => {
  const rows = [
    { x: 5, y: 3 },
    { x: 15, y: null },
    { x: null, y: 3 },
    { x: 5, y: null },
  ];
  it.each([
    // [strategy, noTrueChild, x=5 y=3, x=15, x missing, y missing]
    ['none', 'returnNullPrediction', [11, 2, null, null]],
    ['none', 'returnLastPrediction', [11, 2, 0, 1]],
    ['lastPrediction', 'returnNullPrediction', [11, 2, 0, 1]],
    ['nullPrediction', 'returnNullPrediction', [11, 2, null, null]],
    ['defaultChild', 'returnNullPrediction', [11, 2, 2, 12]],
  ])('missingValueStrategy=%s, noTrueChildStrategy=%s', async (strategy, noTrueChild, expected) => {
    const results = await score(tree(strategy, noTrueChild), rows);
    expect(results.map((r) => r.t)).toEqual(expected);
  });
});

describe('TreeModel weightedConfidence', () => {
  it("weighs the followed children's confidences (ScoreDistribution probabilities when given) and leaves out what predicts nothing", async () => {
    const dictionary = `${xy}<DataField name="c" optype="categorical" dataType="string"><Value value="A"/><Value value="B"/></DataField>`;
    const schema =
      '<MiningSchema><MiningField name="x"/><MiningField name="y"/><MiningField name="c" usageType="target"/></MiningSchema>';
    const leaf = (id: string, records: number, predicate: string, pA: number) =>
      `<Node id="${id}" recordCount="${records}">${predicate}<ScoreDistribution value="A" recordCount="0" probability="${pA}"/><ScoreDistribution value="B" recordCount="0" probability="${1 - pA}"/></Node>`;
    const model = readPmml(
      pmml(
        dictionary,
        `<TreeModel functionName="classification" missingValueStrategy="weightedConfidence">${schema}<Output><OutputField name="c" feature="predictedValue"/><OutputField name="pA" feature="probability" value="A"/></Output>
          <Node id="root"><True/>
            ${leaf('a', 3, '<SimplePredicate field="x" operator="lessThan" value="0"/>', 0.25)}
            <Node id="b" recordCount="1"><SimplePredicate field="x" operator="greaterOrEqual" value="0"/>
              ${leaf('b1', 0, '<SimplePredicate field="y" operator="lessThan" value="0"/>', 1)}
              ${leaf('b2', 0, '<SimplePredicate field="y" operator="greaterOrEqual" value="0"/>', 1)}
            </Node>
          </Node></TreeModel>`,
      ),
    );
    expect(
      await score(model, [{ x: -1 }, { x: 1, y: 1 }, { x: null, y: 1 }, { x: 1, y: null }, { x: null, y: null }]),
    ).toEqual([
      { c: 'B', pA: 0.25 }, // leaf a: its probabilities, not its (zero) record counts
      { c: 'A', pA: 1 }, // leaf b2
      { c: 'B', pA: (3 * 0.25 + 1 * 1) / 4 }, // a and b followed, weighted 3 and 1: A .4375, B .5625
      { c: null, pA: null }, // b's children both followed, with no records between them: b predicts nothing
      { c: 'B', pA: 0.25 }, // a and b followed; b predicts nothing and is left out: a alone
    ]);
  });
});

describe('MiningModel segmentation', () => {
  const segment = (predicate: string, intercept: number, slope: number, weight = 1, output = '') =>
    `<Segment weight="${weight}">${predicate}<RegressionModel functionName="regression">${schemaXY}${output}<RegressionTable intercept="${intercept}"><NumericPredictor name="x" coefficient="${slope}"/></RegressionTable></RegressionModel></Segment>`;
  const mining = (method: string, segments: string) =>
    readPmml(
      pmml(
        xy,
        `<MiningModel functionName="regression">${schemaXY}<Segmentation multipleModelMethod="${method}">${segments}</Segmentation></MiningModel>`,
      ),
    );
  const three = (weights: [number, number, number]) =>
    segment('<True/>', 1, 2, weights[0]) +
    segment('<True/>', 10, 1, weights[1]) +
    segment('<SimplePredicate field="x" operator="greaterThan" value="100"/>', 1000, 0, weights[2]);

  const cases: [string, [number, number, number], number[]][] = [
    // x = 3: segments give 7 and 13 (the third's predicate is false); x = 200: 401, 210 and 1000
    ['selectFirst', [1, 1, 1], [7, 401]],
    ['sum', [1, 1, 1], [20, 1611]],
    ['average', [1, 1, 1], [10, 537]],
    ['weightedAverage', [1, 3, 4], [(7 + 39) / 4, (401 + 630 + 4000) / 8]],
  ];
  it.each(cases)('%s', async (method, weights, expected) => {
    const results = await score(mining(method, three(weights)), [{ x: 3 }, { x: 200 }]);
    expect(results.map((r) => r.t)).toEqual(expected);
  });

  it('modelChain: a later segment reads what an earlier one output', async () => {
    const dictionary = `${xy}<DataField name="a" optype="continuous" dataType="double"/>`;
    const first = `<Segment><True/><RegressionModel functionName="regression">${schemaXY}<Output><OutputField name="a" feature="predictedValue"/></Output><RegressionTable intercept="1"><NumericPredictor name="x" coefficient="2"/></RegressionTable></RegressionModel></Segment>`;
    const second = `<Segment><True/><RegressionModel functionName="regression">${schemaXY}<RegressionTable intercept="0"><NumericPredictor name="a" coefficient="10"/></RegressionTable></RegressionModel></Segment>`;
    const model = readPmml(
      pmml(
        dictionary,
        `<MiningModel functionName="regression">${schemaXY}<Segmentation multipleModelMethod="modelChain">${first}${second}</Segmentation></MiningModel>`,
      ),
    );
    expect((await score(model, [{ x: 3 }])).map((r) => r.t)).toEqual([70]);
  });

  it('majorityVote: the most voted category, its share as probability (ties: category order)', async () => {
    const dictionary = `${xy.replace('<DataField name="t" optype="continuous" dataType="double"/>', '')}<DataField name="c" optype="categorical" dataType="string"><Value value="A"/><Value value="B"/></DataField>`;
    const schema = '<MiningSchema><MiningField name="x"/><MiningField name="c" usageType="target"/></MiningSchema>';
    const vote = (category: string, predicate = '<True/>') =>
      `<Segment>${predicate}<TreeModel functionName="classification">${schema}<Node score="${category}"><True/></Node></TreeModel></Segment>`;
    const model = readPmml(
      pmml(
        dictionary,
        `<MiningModel functionName="classification">${schema}<Output><OutputField name="c" feature="predictedValue"/><OutputField name="pA" feature="probability" value="A"/></Output>` +
          `<Segmentation multipleModelMethod="majorityVote">${vote('B')}${vote('A')}${vote('A', '<SimplePredicate field="x" operator="lessThan" value="0"/>')}</Segmentation></MiningModel>`,
      ),
    );
    expect(await score(model, [{ x: -1 }, { x: 1 }])).toEqual([
      { c: 'A', pA: 2 / 3 },
      { c: 'A', pA: 0.5 },
    ]);
  });
});

describe('MiningModel segments that give no probabilities', () => {
  const dictionary = `${xy.replace('<DataField name="t" optype="continuous" dataType="double"/>', '')}<DataField name="c" optype="categorical" dataType="string"><Value value="A"/><Value value="B"/></DataField>`;
  const schema = '<MiningSchema><MiningField name="x"/><MiningField name="c" usageType="target"/></MiningSchema>';
  const output =
    '<Output><OutputField name="c" feature="predictedValue"/><OutputField name="pA" feature="probability" value="A"/></Output>';
  // t1: leaves with a ScoreDistribution; t2: its high leaf a score alone (the category without probabilities)
  const t1 = `<Segment id="t1"><True/><TreeModel functionName="classification">${schema}<Node><True/><Node><SimplePredicate field="x" operator="lessThan" value="0"/><ScoreDistribution value="A" recordCount="3"/><ScoreDistribution value="B" recordCount="1"/></Node><Node><True/><ScoreDistribution value="B" recordCount="1"/></Node></Node></TreeModel></Segment>`;
  const t2 = `<Segment id="t2"><True/><TreeModel functionName="classification">${schema}<Node><True/><Node id="low"><SimplePredicate field="x" operator="lessThan" value="0"/><ScoreDistribution value="B" recordCount="1"/></Node><Node id="high" score="A"><True/></Node></Node></TreeModel></Segment>`;
  const mining = (method: string, segments: string) =>
    pmml(
      dictionary,
      `<MiningModel functionName="classification">${schema}${output}<Segmentation multipleModelMethod="${method}">${segments}</Segmentation></MiningModel>`,
    );
  const refusal = (text: string) => {
    try {
      readPmml(text);
    } catch (error) {
      if (error instanceof ModelFileError) return { kind: error.kind, path: error.path, message: error.message };
      throw error;
    }
    throw new Error('accepted');
  };

  it.each(['average', 'weightedAverage', 'max', 'median', 'weightedMedian'])(
    '%s combines probabilities: a segment that may answer without them is refused at upload, naming it',
    (method) => {
      expect(refusal(mining(method, t1 + t2))).toEqual({
        kind: 'unsupported',
        path: 'PMML.MiningModel.Segmentation.Segment[1]',
        message: `PMML.MiningModel.Segmentation.Segment[1]: multipleModelMethod="${method}" combines the segments' probabilities: Segment "t2" can answer without them (its TreeModel's Node.Node[1] "high" has a score but no ScoreDistribution)`,
      });
    },
  );

  it('looks into nested segmentations and where a tree may answer from a node with children', () => {
    const nested = `<Segment><True/><MiningModel functionName="classification">${schema}<Segmentation multipleModelMethod="selectFirst">${t1}${t2}</Segmentation></MiningModel></Segment>`;
    expect(refusal(mining('average', t1 + nested)).message).toBe(
      `PMML.MiningModel.Segmentation.Segment[1]: multipleModelMethod="average" combines the segments' probabilities: Segment (no id) can answer without them (its MiningModel's (selectFirst) Segment[1]: its TreeModel's Node.Node[1] "high" has a score but no ScoreDistribution)`,
    );
    // returnLastPrediction: the root, without a ScoreDistribution, answers when no child is true
    const last = t1.replace('<TreeModel ', '<TreeModel noTrueChildStrategy="returnLastPrediction" ');
    expect(refusal(mining('median', last)).message).toContain(
      `Segment "t1" can answer without them (its TreeModel's Node (no id) has no score and no ScoreDistribution)`,
    );
    // a nested vote gives its shares as probabilities: accepted
    const votes = `<Segment><True/><MiningModel functionName="classification">${schema}<Segmentation multipleModelMethod="majorityVote">${t2}</Segmentation></MiningModel></Segment>`;
    expect(readPmml(mining('average', t1 + votes)).modelType).toBe('MiningModel');
  });

  it('the votes, selectFirst and modelChain take such segments: they need the predicted category only', async () => {
    const rows = [{ x: -1 }, { x: 1 }];
    // x −1: t1 A (3 of 4), t2 B; x 1: t1 B, t2 A (a score alone)
    expect(await score(readPmml(mining('majorityVote', t1 + t2)), rows)).toEqual([
      { c: 'A', pA: 0.5 },
      { c: 'A', pA: 0.5 },
    ]);
    expect(
      await score(readPmml(mining('weightedMajorityVote', t1 + t2.replace('<Segment ', '<Segment weight="3" '))), rows),
    ).toEqual([
      { c: 'B', pA: 0.25 },
      { c: 'A', pA: 0.75 },
    ]);
    // t2 answers: its category, and no probability to give
    expect(await score(readPmml(mining('selectFirst', t2 + t1)), rows)).toEqual([
      { c: 'B', pA: 0 },
      { c: 'A', pA: null },
    ]);
    expect(await score(readPmml(mining('modelChain', t1 + t2)), rows)).toEqual([
      { c: 'B', pA: 0 },
      { c: 'A', pA: null },
    ]);
  });
});

describe('Segmentation missingPredictionTreatment and missingThreshold', () => {
  const segment = (field: string) =>
    `<Segment><True/><RegressionModel functionName="regression">${schemaXY}<RegressionTable intercept="0"><NumericPredictor name="${field}" coefficient="1"/></RegressionTable></RegressionModel></Segment>`;
  const mining = (attributes: string, method = 'average') =>
    pmml(
      xy,
      `<MiningModel functionName="regression">${schemaXY}<Segmentation multipleModelMethod="${method}" ${attributes}>${segment('x')}${segment('y')}</Segmentation></MiningModel>`,
    );
  const refusal = (text: string) => {
    try {
      readPmml(text);
    } catch (error) {
      if (error instanceof ModelFileError) return `${error.kind}: ${error.message}`;
      throw error;
    }
    return 'accepted';
  };

  it('reads PMML 4.4 defaults, continue and 1, and keeps them through the JSON the registry stores', () => {
    const model = readPmml(mining(''));
    expect(model.model).toMatchObject({ missingPredictionTreatment: 'continue', missingThreshold: 1 });
    expect(JSON.parse(JSON.stringify(model))).toEqual(model);
  });

  it('classification average skipSegment: the segments that predict something, averaged', async () => {
    const dictionary = `${xy}<DataField name="c" optype="categorical" dataType="string"><Value value="A"/><Value value="B"/></DataField>`;
    const schema =
      '<MiningSchema><MiningField name="x"/><MiningField name="y"/><MiningField name="c" usageType="target"/></MiningSchema>';
    const logit = (field: string, weight: number) =>
      `<Segment weight="${weight}"><True/><RegressionModel functionName="classification" normalizationMethod="logit">${schema}<RegressionTable intercept="0" targetCategory="A"><NumericPredictor name="${field}" coefficient="1"/></RegressionTable><RegressionTable intercept="0" targetCategory="B"/></RegressionModel></Segment>`;
    const model = (attributes: string) =>
      readPmml(
        pmml(
          dictionary,
          `<MiningModel functionName="classification">${schema}<Output><OutputField name="pA" feature="probability" value="A"/></Output><Segmentation multipleModelMethod="weightedAverage" ${attributes}>${logit('x', 1)}${logit('y', 3)}</Segmentation></MiningModel>`,
        ),
      );
    const rows = [{ x: 1, y: -1 }, { x: 1 }, { y: -1 }];
    const logistic = (v: number) => 1 / (1 + Math.exp(-v));
    const both = expect.closeTo((logistic(1) + 3 * logistic(-1)) / 4, 12);
    // y missing leaves out 3/4 of the weight, x missing 1/4; the rest is averaged alone
    expect((await score(model('missingPredictionTreatment="skipSegment"'), rows)).map((r) => r.pA)).toEqual([
      both,
      logistic(1),
      logistic(-1),
    ]);
    expect(
      (await score(model('missingPredictionTreatment="skipSegment" missingThreshold="0.5"'), rows)).map((r) => r.pA),
    ).toEqual([both, null, logistic(-1)]);
    // continue (the default): a missing prediction cannot be averaged
    expect((await score(model(''), rows)).map((r) => r.pA)).toEqual([both, null, null]);
  });

  it('refuses a threshold outside 0 to 1, an unknown treatment, and skipSegment in a model chain', () => {
    expect(refusal(mining('missingThreshold="1.5"'))).toBe(
      'invalid: PMML.MiningModel: missingThreshold must be a number from 0 to 1, got "1.5"',
    );
    expect(refusal(mining('missingThreshold="half"'))).toMatch(/^invalid: .*missingThreshold" must be a number/);
    expect(refusal(mining('missingPredictionTreatment="sometimes"'))).toMatch(
      /^invalid: PMML\.MiningModel: missingPredictionTreatment must be one of returnMissing, skipSegment, continue/,
    );
    expect(refusal(mining('missingPredictionTreatment="skipSegment"', 'modelChain'))).toBe(
      'invalid: PMML.MiningModel: missingPredictionTreatment="skipSegment" is not for multipleModelMethod="modelChain"',
    );
    expect(refusal(mining('missingPredictionTreatment="skipSegment" missingThreshold="0"'))).toBe('accepted');
  });
});

describe('Scorecard baselines and algorithms', () => {
  const card = (algorithm: string, method: string) =>
    readPmml(
      pmml(
        xy,
        `
    <Scorecard functionName="regression" useReasonCodes="true" reasonCodeAlgorithm="${algorithm}" baselineMethod="${method}">${schemaXY}
      <Output><OutputField name="t" feature="predictedValue"/><OutputField name="r1" feature="reasonCode" rank="1"/><OutputField name="r2" feature="reasonCode"  rank="2"/></Output>
      <Characteristics>
        <Characteristic name="A" reasonCode="RA"><Attribute partialScore="5"><SimplePredicate field="x" operator="lessThan" value="10"/></Attribute><Attribute partialScore="15"><True/></Attribute></Characteristic>
        <Characteristic name="B" reasonCode="RB"><Attribute partialScore="0"><SimplePredicate field="y" operator="lessThan" value="10"/></Attribute><Attribute partialScore="8"><True/></Attribute></Characteristic>
      </Characteristics>
    </Scorecard>`,
      ),
    );

  it('pointsAbove against the lowest partial score (baselineMethod min): points above it rank', async () => {
    // A: 15 − 5 = 10, B: 8 − 0 = 8; then A: 5 − 5 = 0 (no reason), B: 8
    expect(
      await score(card('pointsAbove', 'min'), [
        { x: 20, y: 20 },
        { x: 1, y: 20 },
      ]),
    ).toEqual([
      { t: 23, r1: 'RA', r2: 'RB' },
      { t: 13, r1: 'RB', r2: null },
    ]);
  });

  it('pointsBelow against the highest partial score (baselineMethod max)', async () => {
    // A: 15 − 5 = 10, B: 8 − 0 = 8
    expect(
      await score(card('pointsBelow', 'max'), [
        { x: 1, y: 1 },
        { x: 20, y: 20 },
      ]),
    ).toEqual([
      { t: 5, r1: 'RA', r2: 'RB' },
      { t: 23, r1: null, r2: null },
    ]);
  });

  it('refuses reason codes without a baseline when the method does not say how to compute one', () => {
    expect(() => card('pointsBelow', 'mean')).toThrow(/needs a baselineScore/);
  });
});

describe('categories that are names of Object.prototype', () => {
  it('predicts and gives probabilities for categories named constructor and __proto__', async () => {
    const dictionary = `${xy.replace('<DataField name="t" optype="continuous" dataType="double"/>', '')}<DataField name="c" optype="categorical" dataType="string"><Value value="constructor"/><Value value="__proto__"/></DataField>`;
    const schema = '<MiningSchema><MiningField name="x"/><MiningField name="c" usageType="target"/></MiningSchema>';
    const model = readPmml(
      pmml(
        dictionary,
        `<TreeModel functionName="classification">${schema}<Output><OutputField name="c" feature="predictedValue"/><OutputField name="pc" feature="probability" value="constructor"/><OutputField name="pp" feature="probability" value="__proto__"/></Output>` +
          '<Node><True/><Node score="__proto__"><SimplePredicate field="x" operator="lessThan" value="0"/><ScoreDistribution value="constructor" recordCount="1"/><ScoreDistribution value="__proto__" recordCount="3"/></Node>' +
          '<Node score="constructor"><True/><ScoreDistribution value="constructor" recordCount="1"/></Node></Node></TreeModel>',
      ),
    );
    expect(await score(model, [{ x: -1 }, { x: 1 }])).toEqual([
      { c: '__proto__', pc: 0.25, pp: 0.75 },
      { c: 'constructor', pc: 1, pp: 0 },
    ]);
  });
});

describe('RegressionModel details', () => {
  it('returns no prediction when an input it needs is missing, and replaces a missing value when told to', async () => {
    const model = readPmml(
      pmml(
        xy,
        `<RegressionModel functionName="regression" normalizationMethod="exp"><MiningSchema><MiningField name="x" missingValueReplacement="0"/><MiningField name="y"/><MiningField name="t" usageType="target"/></MiningSchema>
      <RegressionTable intercept="0.5"><NumericPredictor name="x" coefficient="1" exponent="2"/><NumericPredictor name="y" coefficient="-1"/></RegressionTable></RegressionModel>`,
      ),
    );
    expect((await score(model, [{ x: 2, y: 1 }, { y: 1 }, { x: 2 }])).map((r) => r.t)).toEqual([
      Math.exp(0.5 + 4 - 1),
      Math.exp(0.5 - 1),
      null,
    ]);
  });

  it('fails the run with MODEL_INPUT_INVALID naming the field under returnInvalid (the default)', async () => {
    const model = readPmml(
      pmml(
        '<DataField name="x" optype="continuous" dataType="double"><Interval closure="closedOpen" leftMargin="0" rightMargin="1"/></DataField><DataField name="t" optype="continuous" dataType="double"/>',
        '<RegressionModel functionName="regression"><MiningSchema><MiningField name="x"/><MiningField name="t" usageType="target"/></MiningSchema><RegressionTable intercept="1"><NumericPredictor name="x" coefficient="1"/></RegressionTable></RegressionModel>',
      ),
    );
    await expect(score(model, [{ x: 1 }])).rejects.toMatchObject({
      code: 'MODEL_INPUT_INVALID',
      nodeId: 'model',
      message: expect.stringContaining('model input "x"'),
    });
    expect((await score(model, [{ x: 0.5 }])).map((r) => r.t)).toEqual([1.5]);
  });

  // Φ from Python's 0.5 * math.erfc(-x / math.sqrt(2)), to 17 digits.
  const PHI = {
    '-3': 0.0013498980316300957,
    '-0.5': 0.3085375387259869,
    '1.25': 0.8943502263331446,
    '7': 0.9999999999987201,
  };
  it('a binary classification through probit, cloglog, loglog and cauchit: the first category by the link, the last the rest', async () => {
    const classifier = (method: string) =>
      readPmml(
        pmml(
          '<DataField name="x" optype="continuous" dataType="double"/><DataField name="t" optype="categorical" dataType="string"><Value value="yes"/><Value value="no"/></DataField>',
          `<RegressionModel functionName="classification" normalizationMethod="${method}"><MiningSchema><MiningField name="x"/><MiningField name="t" usageType="target"/></MiningSchema>
          <RegressionTable intercept="0" targetCategory="yes"><NumericPredictor name="x" coefficient="1"/></RegressionTable><RegressionTable intercept="0" targetCategory="no"/></RegressionModel>`,
        ),
      );
    const xs = [-3, -0.5, 1.25, 7];
    const links: Record<string, (x: number) => number> = {
      probit: (x) => PHI[String(x) as keyof typeof PHI],
      cloglog: (x) => 1 - Math.exp(-Math.exp(x)),
      loglog: (x) => Math.exp(-Math.exp(-x)),
      cauchit: (x) => 0.5 + Math.atan(x) / Math.PI,
    };
    for (const [method, f] of Object.entries(links)) {
      const rows = await score(
        classifier(method),
        xs.map((x) => ({ x })),
        ['probability(yes)', 'probability(no)'],
      );
      rows.forEach((row, k) => {
        const yes = f(xs[k]);
        expect([method, xs[k], row['probability(yes)']]).toEqual([method, xs[k], expect.closeTo(yes, 15)]);
        expect(row['probability(no)']).toBeCloseTo(1 - yes, 15);
      });
    }
  });
});

describe('transformations and Targets', () => {
  const derived = (expression: string, local = '') =>
    readPmml(
      pmml(
        xy,
        `<TransformationDictionary><DerivedField name="d" dataType="double" optype="continuous">${expression}</DerivedField></TransformationDictionary>
    <RegressionModel functionName="regression">${schemaXY}${local}<RegressionTable intercept="0"><NumericPredictor name="d" coefficient="1"/></RegressionTable></RegressionModel>`,
      ),
    );
  const ln = (treatment: string) => derived(`<Apply function="ln"${treatment}><FieldRef field="x"/></Apply>`);

  // Expected values from Python's math module (round() halves to even, as rint; erf, erfc).
  it.each<[string, string, number[], number]>([
    ['ln1p', 'x', [1e-10], 9.999999999500001e-11],
    ['ln1p', 'x', [2.5], 1.252762968495368],
    ['expm1', 'x', [1e-10], 1.00000000005e-10],
    ['expm1', 'x', [-0.7], -0.5034146962085905],
    ['rint', 'x', [2.5], 2],
    ['rint', 'x', [-3.5], -4],
    ['rint', 'x', [1.4], 1],
    ['modulo', 'x,y', [-7, 3], 2],
    ['modulo', 'x,y', [7, -3], -2],
    ['modulo', 'x,y', [5.5, 2], 1.5],
    ['atan2', 'x,y', [1, -2], 2.677945044588987],
    ['hypot', 'x,y', [3, 4], 5],
    ['tanh', 'x', [0.3], 0.2913126124515909],
    ['erf', 'x', [1e-9], 1.1283791670955127e-9],
    ['erf', 'x', [0.5], 0.5204998778130465],
    ['erf', 'x', [-2.5], -0.999593047982555],
    ['erf', 'x', [3.2], 0.9999939742388483],
    ['stdNormalCDF', 'x', [-1.7], 0.044565462758543076],
    ['stdNormalCDF', 'x', [0.2], 0.579259709439103],
    ['stdNormalPDF', 'x', [0.8], 0.28969155276148273],
    ['normalCDF', 'x,y,15', [110, 100], 0.7475074624530771],
    ['normalPDF', 'x,y,15', [110, 100], 0.02129653370149015],
  ])('Apply %s(%s) of %j is %d', async (fn, args, values, expected) => {
    const refs = args
      .split(',')
      .map((a) => (/^\d/.test(a) ? `<Constant dataType="double">${a}</Constant>` : `<FieldRef field="${a}"/>`));
    const [x, y] = values;
    const [row] = await score(derived(`<Apply function="${fn}">${refs.join('')}</Apply>`), [{ x, y: y ?? 0 }]);
    const scale = Math.max(Math.abs(expected), Number.MIN_VALUE);
    expect(Math.abs((row.t as number) - expected) / scale).toBeLessThan(1e-13);
  });

  it('fails the run with MODEL_INPUT_INVALID naming the derived field when a function result is invalid under returnInvalid (the default)', async () => {
    await expect(score(ln(''), [{ x: -1 }])).rejects.toMatchObject({
      code: 'MODEL_INPUT_INVALID',
      nodeId: 'model',
      message: expect.stringContaining(
        'derived field "d" of node \'model\' is invalid: function "ln" gave NaN for input -1',
      ),
    });
    expect((await score(ln(''), [{ x: Math.E }])).map((r) => r.t)).toEqual([1]);
  });

  it('computes only the derived fields the model reads: an unused one that would be invalid fails nothing', async () => {
    const model = readPmml(
      pmml(
        xy,
        `<TransformationDictionary>
      <DerivedField name="unused" dataType="double"><Apply function="ln"><FieldRef field="x"/></Apply></DerivedField>
      <DerivedField name="d" dataType="double"><Apply function="*"><FieldRef field="x"/><Constant>2</Constant></Apply></DerivedField>
      </TransformationDictionary><RegressionModel functionName="regression">${schemaXY}<RegressionTable intercept="0"><NumericPredictor name="d" coefficient="1"/></RegressionTable></RegressionModel>`,
      ),
    );
    expect((await score(model, [{ x: -1 }])).map((r) => r.t)).toEqual([-2]);
  });

  it('keeps an invalid result under asIs and makes it missing under asMissing (a regression then predicts nothing)', async () => {
    const big = (treatment: string) =>
      derived(
        `<Apply function="if"><Apply function="greaterThan"><Apply function="/" invalidValueTreatment="${treatment}"><Constant>1</Constant><FieldRef field="x"/></Apply><Constant>1000</Constant></Apply><Constant>7</Constant><Constant>8</Constant></Apply>`,
      );
    // 1 / 0 is Infinity (> 1000) under asIs; missing under asMissing, and so is the condition of the if
    expect((await score(big('asIs'), [{ x: 0 }, { x: 4 }])).map((r) => r.t)).toEqual([7, 8]);
    expect((await score(big('asMissing'), [{ x: 0 }, { x: 4 }])).map((r) => r.t)).toEqual([null, 8]);
    expect((await score(ln(' invalidValueTreatment="asMissing"'), [{ x: 0 }])).map((r) => r.t)).toEqual([null]);
  });

  it('isMissing answers for a missing input, unless mapMissingTo is given (PMML applies it whatever the function)', async () => {
    // a derived double: true and false become 1 and 0
    const missing = (attributes: string) =>
      derived(`<Apply function="isMissing"${attributes}><FieldRef field="x"/></Apply>`);
    expect((await score(missing(''), [{ x: null }, { x: 3 }])).map((r) => r.t)).toEqual([1, 0]);
    expect((await score(missing(' mapMissingTo="7"'), [{ x: null }, { x: 3 }])).map((r) => r.t)).toEqual([7, 0]);
  });

  it('a number function given text is invalid, not concatenated', async () => {
    const model = readPmml(
      pmml(
        '<DataField name="s" optype="categorical" dataType="string"/><DataField name="t" optype="continuous" dataType="double"/>',
        `<RegressionModel functionName="regression"><MiningSchema><MiningField name="s"/><MiningField name="t" usageType="target"/></MiningSchema>
        <LocalTransformations><DerivedField name="d" dataType="double"><Apply function="+" invalidValueTreatment="asMissing" defaultValue="-1"><FieldRef field="s"/><Constant>1</Constant></Apply></DerivedField></LocalTransformations>
        <RegressionTable intercept="0"><NumericPredictor name="d" coefficient="1"/></RegressionTable></RegressionModel>`,
      ),
    );
    expect((await score(model, [{ s: 'a' }])).map((r) => r.t)).toEqual([-1]);
  });

  it("computes a segment's LocalTransformations and applies its Targets before the segmentation combines", async () => {
    const segment = (factor: number) => `<Segment><True/><RegressionModel functionName="regression">${schemaXY}
      <Targets><Target field="t" rescaleFactor="${factor}"/></Targets>
      <LocalTransformations><DerivedField name="x2" dataType="double"><Apply function="*"><FieldRef field="x"/><FieldRef field="x"/></Apply></DerivedField></LocalTransformations>
      <RegressionTable intercept="1"><NumericPredictor name="x2" coefficient="1"/></RegressionTable></RegressionModel></Segment>`;
    const model = readPmml(
      pmml(
        xy,
        `<MiningModel functionName="regression">${schemaXY}<Targets><Target field="t" rescaleConstant="1000"/></Targets><Segmentation multipleModelMethod="sum">${segment(1)}${segment(10)}</Segmentation></MiningModel>`,
      ),
    );
    // x = 3: (1 + 9) × 1 + (1 + 9) × 10, then + 1000
    expect((await score(model, [{ x: 3 }])).map((r) => r.t)).toEqual([1110]);
  });

  it('a model chain passes a transformedValue output on with its dataType: text compares as text', async () => {
    const model = readPmml(
      pmml(
        xy,
        `<MiningModel functionName="regression">${schemaXY}<Segmentation multipleModelMethod="modelChain">
      <Segment><True/><RegressionModel functionName="regression">${schemaXY}<Output><OutputField name="band" feature="transformedValue" dataType="string">
        <Apply function="if"><Apply function="lessThan"><FieldRef field="x"/><Constant>10</Constant></Apply><Constant dataType="string">007</Constant><Constant dataType="string">high</Constant></Apply>
      </OutputField></Output><RegressionTable intercept="0"/></RegressionModel></Segment>
      <Segment><True/><TreeModel functionName="regression">${schemaXY}<Node score="0"><True/><Node score="1"><SimplePredicate field="band" operator="equal" value="007"/></Node><Node score="2"><True/></Node></Node></TreeModel></Segment>
      </Segmentation></MiningModel>`,
      ),
    );
    // "007" stays text: read as a number it would be 7 and match nothing
    expect((await score(model, [{ x: 3 }, { x: 30 }])).map((r) => r.t)).toEqual([1, 2]);
  });

  it('keeps what it read through the JSON the registry stores', () => {
    const model = derived(
      '<Discretize field="x" defaultValue="0"><DiscretizeBin binValue="1"><Interval closure="closedOpen" leftMargin="0"/></DiscretizeBin></Discretize>',
    );
    expect(JSON.parse(JSON.stringify(model))).toEqual(model);
    expect(model.derived).toEqual([
      {
        name: 'd',
        dataType: 'double',
        optype: 'continuous',
        expression: {
          op: 'discretize',
          field: 'x',
          defaultValue: 0,
          bins: [{ value: 1, min: 0, minClosed: true, maxClosed: false }],
        },
      },
    ]);
  });

  it('refuses, naming the element, what it does not run and what is not well-formed', () => {
    const refused = (text: () => unknown) => {
      try {
        text();
      } catch (error) {
        return error instanceof ModelFileError ? `${error.kind}: ${error.message}` : String(error);
      }
      return 'accepted';
    };
    expect(refused(() => derived('<Apply function="myFunction"><FieldRef field="x"/></Apply>'))).toMatch(
      /^unsupported: .*Apply: function "myFunction" is not supported/,
    );
    expect(refused(() => derived('<Apply function="sqrt"><FieldRef field="x"/><FieldRef field="y"/></Apply>'))).toMatch(
      /^invalid: .*function "sqrt" takes 1 arguments, got 2/,
    );
    expect(
      refused(() =>
        derived('<MapValues outputColumn="o"><FieldColumnPair field="x" column="c"/><TableLocator/></MapValues>'),
      ),
    ).toMatch(/^unsupported: .*MapValues\.TableLocator/);
    expect(
      refused(() =>
        derived(
          '<NormContinuous field="x"><LinearNorm orig="2" norm="0"/><LinearNorm orig="1" norm="1"/></NormContinuous>',
        ),
      ),
    ).toMatch(/^invalid: .*LinearNorm\[1\]: orig must increase/);
    expect(refused(() => derived('<FieldRef field="d"/>'))).toMatch(
      /^invalid: PMML\.TransformationDictionary\.DerivedField\[0\]: derived field "d" depends on itself \(d → d\)/,
    );
    expect(
      refused(() =>
        derived(
          '<FieldRef field="x"/>',
          '<LocalTransformations><DerivedField name="d" dataType="double"><FieldRef field="x"/></DerivedField></LocalTransformations>',
        ),
      ),
    ).toMatch(/^invalid: .*field "d" is already defined/);
    expect(
      refused(() =>
        readPmml(
          pmml(
            xy,
            `<RegressionModel functionName="regression">${schemaXY}<Targets><Target field="t"><TargetValue priorProbability="0.5" value="a"/></Target></Targets><RegressionTable intercept="0"/></RegressionModel>`,
          ),
        ),
      ),
    ).toMatch(/^invalid: .*TargetValue\[0\]: priorProbability is for the target of a classification/);
  });
});

describe('files the reader refuses', () => {
  const refuse = (text: string) => {
    try {
      readPmml(text);
    } catch (error) {
      if (error instanceof ModelFileError) return { kind: error.kind, message: error.message };
      throw error;
    }
    throw new Error('accepted');
  };

  it('refuses a DOCTYPE (entity bomb) before expanding anything', () => {
    const bomb =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><PMML>&lol2;</PMML>';
    expect(refuse(bomb)).toEqual({ kind: 'invalid', message: expect.stringContaining('DOCTYPE') });
  });

  it('refuses nesting deeper than 128 elements without recursing', () => {
    expect(refuse(`<PMML>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</PMML>`)).toEqual({
      kind: 'invalid',
      message: expect.stringContaining('deeper than 128'),
    });
  });

  it('refuses what is not XML, not PMML, or an unknown entity, naming where', () => {
    expect(refuse('<PMML><DataDictionary></PMML>').message).toMatch(/does not match/);
    expect(refuse('<root/>').message).toMatch(/root element must be <PMML>/);
    expect(refuse('<PMML a="&ext;"/>').message).toMatch(/unknown entity/);
    expect(
      refuse(
        pmml(
          xy,
          `<TreeModel functionName="regression">${schemaXY}<Node score="1"><SimplePredicate field="nope" operator="equal" value="1"/></Node></TreeModel>`,
        ),
      ).message,
    ).toMatch(/PMML\.TreeModel\.Node\.SimplePredicate: field "nope" is not in the DataDictionary/);
  });

  it('refuses outliers without a bound, with a bound that is no number, or on a field that is no number, naming the field', () => {
    const withOutliers = (dictionary: string, field: string) =>
      refuse(
        pmml(
          dictionary,
          `<RegressionModel functionName="regression"><MiningSchema>${field}<MiningField name="t" usageType="target"/></MiningSchema><RegressionTable intercept="1"/></RegressionModel>`,
        ),
      );
    expect(withOutliers(xy, '<MiningField name="x" outliers="asExtremeValues"/>')).toEqual({
      kind: 'invalid',
      message: expect.stringMatching(/MiningField\[0\]: outliers="asExtremeValues" needs lowValue or highValue/),
    });
    expect(withOutliers(xy, '<MiningField name="x" outliers="asMissingValues" lowValue="low"/>')).toEqual({
      kind: 'invalid',
      message: expect.stringMatching(/MiningField\[0\]: lowValue="low" is not a number/),
    });
    expect(
      withOutliers(
        `${xy}<DataField name="s" optype="categorical" dataType="string"/>`,
        '<MiningField name="s" outliers="asMissingValues" lowValue="1"/>',
      ),
    ).toEqual({
      kind: 'invalid',
      message: expect.stringMatching(/outliers="asMissingValues" applies to numeric fields; "s" is string/),
    });
    expect(withOutliers(xy, '<MiningField name="x" outliers="sometimes" lowValue="1"/>').kind).toBe('invalid');
    expect(
      withOutliers(
        '<DataField name="x" optype="continuous" dataType="double"><Value value="1" property="odd"/></DataField><DataField name="t" optype="continuous" dataType="double"/>',
        '<MiningField name="x"/>',
      ),
    ).toEqual({ kind: 'invalid', message: expect.stringMatching(/DataField\[0\]\.Value\[0\].*property/) });
  });

  it('refuses a tree whose missing value strategy would weigh or add up counts it lacks, naming the Node', () => {
    const classes =
      '<DataField name="x" optype="continuous" dataType="double"/><DataField name="c" optype="categorical" dataType="string"><Value value="A"/><Value value="B"/></DataField>';
    const schemaC = '<MiningSchema><MiningField name="x"/><MiningField name="c" usageType="target"/></MiningSchema>';
    const split = (left: string, right: string) =>
      `<Node recordCount="10"><True/><Node ${left}><SimplePredicate field="x" operator="lessThan" value="0"/><ScoreDistribution value="A" recordCount="3"/><ScoreDistribution value="B" recordCount="1"/></Node>` +
      `<Node ${right}><SimplePredicate field="x" operator="greaterOrEqual" value="0"/>${right.includes('score') ? '' : '<ScoreDistribution value="A" recordCount="1"/><ScoreDistribution value="B" recordCount="5"/>'}</Node></Node>`;
    const classification = (strategy: string, nodes: string, noTrueChild = 'returnNullPrediction') =>
      refuse(
        pmml(
          classes,
          `<TreeModel functionName="classification" missingValueStrategy="${strategy}" noTrueChildStrategy="${noTrueChild}">${schemaC}${nodes}</TreeModel>`,
        ),
      );
    // weightedConfidence weighs each child by its Node recordCount
    expect(classification('weightedConfidence', split('id="low" recordCount="4"', 'id="high"'))).toEqual({
      kind: 'unsupported',
      message:
        'PMML.TreeModel.Node.Node[1]: missingValueStrategy="weightedConfidence" needs the recordCount of every Node but the root: Node "high" has none',
    });
    expect(classification('weightedConfidence', split('recordCount="4"', ''))).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining(
        'Node[1]: missingValueStrategy="weightedConfidence" needs the recordCount of every Node but the root: Node (no id) has none',
      ),
    });
    // a leaf's confidences, or the counts aggregateNodes adds up, are its ScoreDistribution
    expect(classification('aggregateNodes', split('id="low"', 'id="high" score="B"'))).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining(
        'Node[1]: missingValueStrategy="aggregateNodes" needs a ScoreDistribution on every leaf Node: Node "high" has none',
      ),
    });
    // where a path may end on a node with children (returnLastPrediction), that node needs one too
    expect(
      classification(
        'aggregateNodes',
        split('id="low"', 'id="high"').replace(
          '<True/>',
          '<True/><ScoreDistribution value="A" recordCount="4"/><ScoreDistribution value="B" recordCount="6"/><Node id="mid"><False/><Node score="A"><True/><ScoreDistribution value="A" recordCount="1"/></Node></Node>',
        ),
        'returnLastPrediction',
      ),
    ).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining(
        'missingValueStrategy="aggregateNodes" needs a ScoreDistribution on every Node (noTrueChildStrategy="returnLastPrediction"): Node "mid" has none',
      ),
    });
    // a regression's leaves are weighed by their records
    const regression = (leaf: string) =>
      refuse(
        pmml(
          xy,
          `<TreeModel functionName="regression" missingValueStrategy="aggregateNodes">${schemaXY}<Node score="0"><True/><Node id="a" score="1" recordCount="2"><SimplePredicate field="x" operator="lessThan" value="0"/></Node><Node id="b" ${leaf}><True/></Node></Node></TreeModel>`,
        ),
      );
    expect(regression('score="2"')).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining(
        'Node[1]: missingValueStrategy="aggregateNodes" needs the recordCount of every leaf Node: Node "b" has none',
      ),
    });
    expect(regression('score="2" recordCount="-1"')).toEqual({
      kind: 'invalid',
      message: expect.stringContaining('Node[1]: recordCount must be a finite number, 0 or more, got "-1"'),
    });
  });

  it('refuses, as unsupported, other model types, derived fields and strategies it does not implement', () => {
    expect(refuse(pmml(xy, `<NeuralNetwork functionName="regression">${schemaXY}</NeuralNetwork>`))).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining('NeuralNetwork is not supported'),
    });
    expect(
      refuse(
        pmml(
          xy,
          `<TreeModel functionName="regression" missingValueStrategy="weightedConfidence">${schemaXY}<Node score="1"><True/></Node></TreeModel>`,
        ),
      ),
    ).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining('missingValueStrategy="weightedConfidence" of a regression is not supported'),
    });
    expect(
      refuse(
        pmml(
          xy,
          `<RegressionModel functionName="regression">${schemaXY}<LocalTransformations><DerivedField name="d" dataType="double"><TextIndex textField="x"/></DerivedField></LocalTransformations><RegressionTable intercept="1"/></RegressionModel>`,
        ),
      ),
    ).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining(
        'PMML.RegressionModel.LocalTransformations.DerivedField[0].TextIndex: <TextIndex> is not supported',
      ),
    });
    const manyCategories = `<DataField name="x" optype="continuous" dataType="double"/><DataField name="c" optype="categorical" dataType="string">${Array.from({ length: 1001 }, (_, k) => `<Value value="c${k}"/>`).join('')}</DataField>`;
    expect(
      refuse(
        pmml(
          manyCategories,
          '<TreeModel functionName="classification"><MiningSchema><MiningField name="x"/><MiningField name="c" usageType="target"/></MiningSchema><Node score="c0"><True/></Node></TreeModel>',
        ),
      ),
    ).toEqual({ kind: 'unsupported', message: expect.stringContaining('1001 target categories; at most 1000') });
    // 1,000 categories in 2,601 nodes: 2,601,000 probabilities; a walk of several children also keeps a vector per
    // leaf (2,600 more arrays): past the 5,000,000 the generated code may hold
    const thousand = manyCategories.replace('<Value value="c1000"/>', '');
    const wide = (strategy: string) =>
      pmml(
        thousand,
        `<TreeModel functionName="classification" missingValueStrategy="${strategy}"><MiningSchema><MiningField name="x"/><MiningField name="c" usageType="target"/></MiningSchema><Node><True/><ScoreDistribution value="c0" recordCount="1"/>${Array.from({ length: 2600 }, (_, k) => `<Node><SimplePredicate field="x" operator="equal" value="${k}"/><ScoreDistribution value="c${k % 1000}" recordCount="1"/></Node>`).join('')}</Node></TreeModel>`,
      );
    expect(readPmml(wide('none')).modelType).toBe('TreeModel');
    expect(refuse(wide('aggregateNodes'))).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining('its tree nodes would hold 5201000 probabilities'),
    });
    // the same value refused the same way wherever PMML allows it: a date type in a derived field, a function of a segment
    const derivedDate = `<RegressionModel functionName="regression">${schemaXY}<LocalTransformations><DerivedField name="d" dataType="dateDaysSince[1970]"><FieldRef field="x"/></DerivedField></LocalTransformations><RegressionTable intercept="1"/></RegressionModel>`;
    expect(refuse(pmml(xy, derivedDate))).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining('dataType="dateDaysSince[1970]" is not supported'),
    });
    const segmentClustering = `<MiningModel functionName="regression">${schemaXY}<Segmentation multipleModelMethod="sum"><Segment><True/><RegressionModel functionName="clustering">${schemaXY}<RegressionTable intercept="1"/></RegressionModel></Segment></Segmentation></MiningModel>`;
    expect(refuse(pmml(xy, segmentClustering))).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining('functionName="clustering" is not supported'),
    });
    // the methods PMML reserves for the other function, and selectAll (several predictions, not one)
    const method = (functionName: string, name: string) =>
      refuse(
        pmml(
          xy,
          `<MiningModel functionName="${functionName}">${schemaXY}<Segmentation multipleModelMethod="${name}"><Segment><True/><RegressionModel functionName="regression">${schemaXY}<RegressionTable intercept="1"/></RegressionModel></Segment></Segmentation></MiningModel>`,
        ),
      );
    expect(method('regression', 'max')).toEqual({
      kind: 'invalid',
      message: expect.stringContaining('multipleModelMethod="max" is for classifications'),
    });
    expect(method('classification', 'weightedSum')).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining('multipleModelMethod="weightedSum" of a classification is not supported'),
    });
    expect(method('regression', 'selectAll')).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining('multipleModelMethod="selectAll" is not supported'),
    });
    const segmentTreatment = `<MiningModel functionName="regression">${schemaXY}<Segmentation multipleModelMethod="sum"><Segment><True/><RegressionModel functionName="regression"><MiningSchema><MiningField name="x" missingValueReplacement="1"/></MiningSchema><RegressionTable intercept="1"/></RegressionModel></Segment></Segmentation></MiningModel>`;
    expect(refuse(pmml(xy, segmentTreatment))).toEqual({
      kind: 'unsupported',
      message: expect.stringContaining("missingValueReplacement in a segment's MiningSchema"),
    });
  });
});

describe('MODEL node compile checks', () => {
  const model = readPmml(
    pmml(
      xy,
      `<RegressionModel functionName="regression">${schemaXY}<RegressionTable intercept="1"><NumericPredictor name="x" coefficient="1"/></RegressionTable></RegressionModel>`,
    ),
  );
  const node = (settings: Record<string, unknown>) =>
    chain([input('x', 'DOUBLE'), input('y', 'DOUBLE')], [{ id: 'model', type: 'MODEL', settings }]);

  it('reports a model that was not resolved, unknown inputs and outputs, and inputs no variable feeds', () => {
    const codes = (doc: ReturnType<typeof node> & { models?: Record<string, ModelDocument> }) => {
      try {
        engine.compile(`checks-${++counter}`, doc);
        return [];
      } catch (error) {
        return (error as { diagnostics: { code: string; path?: string }[] }).diagnostics.map(
          (d) => `${d.code} ${d.path}`,
        );
      }
    };
    expect(codes(node({ model: 'm', version: 2, outputs: { t: 't' } }))).toEqual([
      'MODEL_NOT_FOUND nodeProperties.model.content.model',
    ]);
    expect(
      codes({ ...node({ model: 'm', inputs: { z: 'x' }, outputs: { nope: 't' } }), models: { 'm@latest': model } }),
    ).toEqual([
      'MODEL_INPUT_UNKNOWN nodeProperties.model.content.inputs.z',
      'MODEL_OUTPUT_UNKNOWN nodeProperties.model.content.outputs.nope',
    ]);
    expect(
      codes({ ...node({ model: 'm', inputs: { x: 'w' }, outputs: { t: 't' } }), models: { 'm@latest': model } }),
    ).toEqual(['UNDEFINED_VARIABLE nodeProperties.model.content.inputs.x']);
    expect(codes({ ...node({ model: 'm', outputs: { t: 't' } }), models: { 'm@latest': model } })).toEqual([]);
  });
});
