import { afterAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { ScenarioEngine, readPmml, type ModelDocument } from '../../../src/engine/index.js';
import { modelFunction } from '../../../src/engine/models/model-codegen.js';
import type { PmmlModelDocument } from '../../../src/engine/models/model-document.js';
import { chain, fakePorts, input, script } from '../support/scenario-builder.js';

/**
 * Trees as straight-line code (src/engine/models/tree-codegen.ts): compound predicates and missing values under
 * each strategy, ensembles whose trees are added in line between segments that are not, and ensembles cut into
 * several functions. Expected values worked by hand from PMML 4.4.
 */

const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());
let counter = 0;

const pmml = (model: string) =>
  `<?xml version="1.0"?><PMML xmlns="http://www.dmg.org/PMML-4_4" version="4.4"><Header/><DataDictionary>` +
  '<DataField name="x" optype="continuous" dataType="double"/><DataField name="y" optype="continuous" dataType="double"/>' +
  `<DataField name="t" optype="continuous" dataType="double"/></DataDictionary>${model}</PMML>`;
const schema =
  '<MiningSchema><MiningField name="x"/><MiningField name="y"/><MiningField name="t" usageType="target"/></MiningSchema>';
const simple = (field: string, operator: string, value: number) =>
  `<SimplePredicate field="${field}" operator="${operator}" value="${value}"/>`;

async function score(model: ModelDocument, rows: Record<string, unknown>[]): Promise<unknown[]> {
  const doc = chain(
    [input('row', 'MAP')],
    [
      script('spread', 'x = row.x === undefined ? null : row.x; y = row.y === undefined ? null : row.y;', ['x', 'y']),
      { id: 'model', type: 'MODEL', settings: { model: 'm', outputs: { t: 'out' } } },
    ],
  );
  const compiled = engine.compile(`tree-codegen-${++counter}`, { ...doc, models: { 'm@latest': model } });
  const results = await Promise.all(rows.map((row) => engine.run(compiled, { row }, { ownerId: 1 })));
  return results.map(({ result }) => result.out);
}

describe('a tree with compound predicates', () => {
  const tree = (strategy: string, noTrueChild: string) =>
    readPmml(
      pmml(`<TreeModel functionName="regression" missingValueStrategy="${strategy}" noTrueChildStrategy="${noTrueChild}">${schema}
        <Node id="root" score="0" defaultChild="b"><True/>
          <Node id="a" score="1"><CompoundPredicate booleanOperator="and">${simple('x', 'lessThan', 10)}${simple('y', 'lessThan', 5)}</CompoundPredicate></Node>
          <Node id="b" score="2"><CompoundPredicate booleanOperator="surrogate">${simple('x', 'greaterOrEqual', 10)}${simple('y', 'greaterOrEqual', 5)}</CompoundPredicate></Node>
          <Node id="c" score="3"><CompoundPredicate booleanOperator="xor">${simple('x', 'greaterThan', 0)}${simple('y', 'greaterThan', 0)}</CompoundPredicate></Node>
        </Node></TreeModel>`),
    );
  // a: and(x<10, y<5); b: surrogate(x>=10, then y>=5); c: xor(x>0, y>0)
  const rows = [
    { x: 5, y: 3 }, // a true
    { x: 5, y: 7 }, // a false, b false (x known), c false: no true child
    { x: null, y: 7 }, // a false (y<5 is false), b true through its surrogate
    { x: null, y: 3 }, // a unknown (x<10 unknown, y<5 true)
    { x: 12, y: null }, // a false (x<10 false), b true
    { x: -1, y: null }, // a unknown (x<10 true, y<5 unknown)
    { x: -1, y: 6 }, // a false, b false, c true (false xor true)
  ];
  it.each([
    ['none', 'returnLastPrediction', [1, 0, 2, 0, 2, 0, 3]],
    ['none', 'returnNullPrediction', [1, null, 2, null, 2, null, 3]],
    ['lastPrediction', 'returnLastPrediction', [1, 0, 2, 0, 2, 0, 3]],
    ['nullPrediction', 'returnLastPrediction', [1, 0, 2, null, 2, null, 3]],
    ['defaultChild', 'returnLastPrediction', [1, 0, 2, 2, 2, 2, 3]],
  ])('missingValueStrategy=%s, noTrueChildStrategy=%s', async (strategy, noTrueChild, expected) => {
    expect(await score(tree(strategy, noTrueChild), rows)).toEqual(expected);
  });

  it('goes down the default child of every level, each written once', async () => {
    // depth 12, a default child at every level: the code would double per level if the default subtree were repeated
    let node = '<Node id="leaf" score="99"><True/></Node>';
    for (let level = 12; level > 0; level--)
      node = `<Node id="n${level}" score="${level}" defaultChild="d${level}"><True/><Node id="d${level}" score="${-level}" defaultChild="${level === 12 ? 'leaf' : `n${level + 1}`}">${simple('x', 'greaterOrEqual', level)}${node}</Node><Node id="e${level}" score="${100 + level}">${simple('x', 'lessThan', level)}</Node></Node>`;
    const model = readPmml(
      pmml(`<TreeModel functionName="regression" missingValueStrategy="defaultChild">${schema}${node}</TreeModel>`),
    );
    const source = modelFunction(model as PmmlModelDocument, { reads: {}, outputs: ['t'], nodeId: 'model' });
    expect(source.length).toBeLessThan(20_000);
    // x missing: the default children all the way down; x = 5.5: x >= level down to level 5, then x < 6
    expect(await score(model, [{ x: null }, { x: 5.5 }, { x: 0 }, { x: 20 }])).toEqual([99, 106, 101, 99]);
  });
});

describe('a large tree', () => {
  it('is cut into functions of subtrees, and scores as one tree', async () => {
    // a balanced tree of depth 11 (4,095 nodes) over [0, 1): each leaf scores the middle of its interval
    const node = (depth: number, lo: number, hi: number, predicate: string): string => {
      const mid = (lo + hi) / 2;
      if (depth === 11) return `<Node score="${mid}">${predicate}</Node>`;
      return `<Node score="${mid}">${predicate}${node(depth + 1, lo, mid, simple('x', 'lessThan', mid))}${node(depth + 1, mid, hi, simple('x', 'greaterOrEqual', mid))}</Node>`;
    };
    const model = readPmml(
      pmml(`<TreeModel functionName="regression">${schema}${node(0, 0, 1, '<True/>')}</TreeModel>`),
    );
    const source = modelFunction(model as PmmlModelDocument, { reads: {}, outputs: ['t'], nodeId: 'model' });
    // at most about 400 nodes a function: a first run compiles the functions on its path, not the whole tree
    expect(source.match(/\bfunction N\d+\(/g)?.length).toBeGreaterThanOrEqual(10);
    const leaf = (x: number) => (Math.floor(x * 2048) + 0.5) / 2048;
    expect(await score(model, [{ x: 0.3 }, { x: 0 }, { x: 0.999 }, { x: null }])).toEqual([
      leaf(0.3),
      leaf(0),
      leaf(0.999),
      null,
    ]);
  });
});

describe('ensembles of trees added in line', () => {
  const tree = (strategy: string, field: string, cut: number, low: number, high: number) =>
    `<TreeModel functionName="regression" missingValueStrategy="${strategy}">${schema}<Node score="0"><True/>` +
    `<Node score="${low}">${simple(field, 'lessThan', cut)}</Node><Node score="${high}">${simple(field, 'greaterOrEqual', cut)}</Node></Node></TreeModel>`;
  const segments = (weights: number[]) =>
    `<Segment weight="${weights[0]}"><True/>${tree('nullPrediction', 'x', 10, 1, 2)}</Segment>` +
    `<Segment weight="${weights[1]}">${simple('y', 'greaterThan', 0)}<RegressionModel functionName="regression">${schema}<RegressionTable intercept="100"/></RegressionModel></Segment>` +
    `<Segment weight="${weights[2]}"><True/>${tree('none', 'y', 5, 10, 20)}</Segment>`;
  const mining = (method: string, weights = [1, 1, 1]) =>
    readPmml(
      pmml(
        `<MiningModel functionName="regression">${schema}<Segmentation multipleModelMethod="${method}">${segments(weights)}</Segmentation></MiningModel>`,
      ),
    );
  // x=5 y=3: 1, 100, 10. x=15 y=-1: 2, (not applied), 10. x missing: the first tree predicts nothing (nullPrediction);
  // y missing: the second segment does not apply and the last tree has no true child: the ensemble predicts nothing.
  const rows = [
    { x: 5, y: 3 },
    { x: 15, y: -1 },
    { x: null, y: 3 },
    { x: 5, y: null },
  ];
  it.each([
    ['sum', [1, 1, 1], [111, 12, null, null]],
    ['average', [1, 1, 1], [37, 6, null, null]],
    ['weightedAverage', [1, 2, 3], [(1 + 200 + 30) / 6, (2 + 30) / 4, null, null]],
  ])('%s, with a segment between the trees that is not a tree', async (method, weights, expected) => {
    expect(await score(mining(method, weights), rows)).toEqual(expected);
  });

  it('adds trees cut into several functions in segment order', async () => {
    // 300 trees of 3 nodes (three functions of at most 400 nodes): tree k gives -k below x = k and k from there
    const trees = Array.from(
      { length: 300 },
      (_, k) => `<Segment><True/>${tree('none', 'x', k, -k, k)}</Segment>`,
    ).join('');
    const model = readPmml(
      pmml(
        `<MiningModel functionName="regression">${schema}<Segmentation multipleModelMethod="sum">${trees}</Segmentation></MiningModel>`,
      ),
    );
    const expected = (x: number) => Array.from({ length: 300 }, (_, k) => (x < k ? -k : k)).reduce((s, v) => s + v, 0);
    expect(await score(model, [{ x: 0 }, { x: 33.5 }, { x: 100 }, { x: null }])).toEqual([
      expected(0),
      expected(33.5),
      expected(100),
      null,
    ]);
  });

  it('writes a 100-tree gradient-boosted model as a few functions, not one per tree node', () => {
    const model = readPmml(
      readFileSync(new URL('../../models/fixtures/onnx/gbm-100.pmml', import.meta.url), 'utf8'),
    ) as PmmlModelDocument;
    const source = modelFunction(model, { reads: {}, outputs: ['limit'], nodeId: 'model' });
    // 1,501 tree nodes; before, a function each
    expect(source.match(/\bfunction\b/g)?.length).toBeLessThan(30);
  });
});

describe('the walk of several children (weightedConfidence, aggregateNodes)', () => {
  // leaves score their number and hold one record each: the mean of the leaves reached is easy to check
  const balanced = (strategy: string, depth: number, yLevel: number) => {
    let leaves = 0;
    const node = (level: number, lo: number, hi: number, predicate: string): string => {
      if (level === depth) return `<Node score="${leaves++}" recordCount="1">${predicate}</Node>`;
      const field = level === yLevel ? 'y' : 'x';
      const mid = (lo + hi) / 2;
      const [left, right] =
        field === 'x'
          ? [
              node(level + 1, lo, mid, simple('x', 'lessThan', mid)),
              node(level + 1, mid, hi, simple('x', 'greaterOrEqual', mid)),
            ]
          : [
              node(level + 1, lo, hi, simple('y', 'lessThan', 0)),
              node(level + 1, lo, hi, simple('y', 'greaterOrEqual', 0)),
            ];
      return `<Node recordCount="${2 ** (depth - level)}" score="-1">${predicate}${left}${right}</Node>`;
    };
    return readPmml(
      pmml(
        `<TreeModel functionName="regression" missingValueStrategy="${strategy}">${schema}${node(0, 0, 512, '<True/>')}</TreeModel>`,
      ),
    );
  };

  it('hands over from a subtree cut into a function of its own, and follows both sides of each unknown split', async () => {
    // depth 10 (2,047 nodes): x splits levels 0–8 into 512 intervals of 1, y the last level; leaf 2i + (y >= 0)
    const model = balanced('aggregateNodes', 10, 9);
    const source = modelFunction(model as PmmlModelDocument, { reads: {}, outputs: ['t'], nodeId: 'model' });
    expect(source.match(/\bfunction N\d+\(/g)?.length).toBeGreaterThanOrEqual(4);
    expect(
      await score(model, [
        { x: 5.5, y: 1 },
        { x: 5.5, y: null },
        { x: null, y: -1 },
        { x: null, y: null },
      ]),
    ).toEqual([
      11, // one path: leaf 11
      10.5, // y unknown at the last split: leaves 10 and 11
      511, // x unknown at the root: every even leaf, 0 … 1022
      511.5, // both: every leaf
    ]);
  });

  it("follows the root when its own predicate is unknown, as any node's", async () => {
    const model = readPmml(
      pmml(`<TreeModel functionName="regression" missingValueStrategy="aggregateNodes">${schema}
        <Node recordCount="4" score="0">${simple('x', 'lessThan', 10)}
          <Node recordCount="1" score="10">${simple('y', 'lessThan', 5)}</Node>
          <Node recordCount="3" score="30">${simple('y', 'greaterOrEqual', 5)}</Node>
        </Node></TreeModel>`),
    );
    // x 20: the root's predicate is false, no prediction; x missing: the root followed; then y decides, or both leaves
    expect(
      await score(model, [
        { x: 20, y: 1 },
        { x: null, y: 1 },
        { x: null, y: null },
      ]),
    ).toEqual([null, 10, 25]);
  });

  it('follows the children an unknown compound predicate leaves open, and skips those it makes false', async () => {
    const model = readPmml(
      pmml(`<TreeModel functionName="regression" missingValueStrategy="aggregateNodes">${schema}
        <Node score="0"><True/>
          <Node recordCount="1" score="1"><CompoundPredicate booleanOperator="and">${simple('x', 'lessThan', 10)}${simple('y', 'lessThan', 5)}</CompoundPredicate></Node>
          <Node recordCount="2" score="4"><CompoundPredicate booleanOperator="or">${simple('x', 'greaterOrEqual', 10)}${simple('y', 'greaterOrEqual', 5)}</CompoundPredicate></Node>
          <Node recordCount="5" score="7"><True/></Node>
        </Node></TreeModel>`),
    );
    expect(
      await score(model, [
        { x: 5, y: 1 }, // the first child, alone
        { x: null, y: 1 }, // and(unknown, true) unknown, or(unknown, false) unknown, True: (1 + 8 + 35) / 8
        { x: null, y: 7 }, // and(unknown, false) false, or(unknown, true) true: the second child alone
        { x: 5, y: null }, // and(true, unknown) unknown, or(false, unknown) unknown, True: all three
      ]),
    ).toEqual([1, 44 / 8, 4, 44 / 8]);
  });

  it('keeps its trees out of the sums added in line: they answer through their own function', async () => {
    const walked = `<TreeModel functionName="regression" missingValueStrategy="aggregateNodes">${schema}<Node score="0"><True/><Node recordCount="1" score="10">${simple('x', 'lessThan', 10)}</Node><Node recordCount="3" score="30">${simple('x', 'greaterOrEqual', 10)}</Node></Node></TreeModel>`;
    const constant = `<TreeModel functionName="regression">${schema}<Node score="100"><True/></Node></TreeModel>`;
    const model = readPmml(
      pmml(
        `<MiningModel functionName="regression">${schema}<Segmentation multipleModelMethod="sum"><Segment><True/>${walked}</Segment><Segment><True/>${constant}</Segment></Segmentation></MiningModel>`,
      ),
    );
    // x missing: both leaves of the first tree, (10 + 3 × 30) / 4 = 25, plus 100
    expect(await score(model, [{ x: 5 }, { x: 20 }, { x: null }])).toEqual([110, 130, 125]);
  });
});
