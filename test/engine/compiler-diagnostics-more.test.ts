import { afterAll, describe, expect, it } from '@jest/globals';
import {
  ScenarioCompileError,
  ScenarioEngine,
  type Diagnostic,
  type ScenarioDocument,
} from '../../src/engine/index.js';
import { chain, fakePorts, input, memoryLookups, scenario, script, type TestNode } from './support/scenario-builder.js';

/** The diagnostics not covered in compiler-diagnostics.test.ts: each is reported, with its node and path. */
const engine = new ScenarioEngine({
  ports: fakePorts({ lookups: memoryLookups({ customers: { rows: [{ id: 1, name: 'a' }], indexed: ['id'] } }) }),
});
afterAll(() => engine.dispose());
let version = 0;

function diagnosticsOf(doc: ScenarioDocument): Diagnostic[] {
  try {
    engine.compile(`diag-more-${++version}`, doc);
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioCompileError);
    return (error as ScenarioCompileError).diagnostics;
  }
  return [];
}
const start = (inputs: unknown[] = []): TestNode => ({ id: 'start', type: 'START', settings: { inputs } });
const end = (id = 'end'): TestNode => ({ id, type: 'END' });
const decision = (id = 'd'): TestNode => ({
  id,
  type: 'DECISION',
  settings: { language: 'javascript', condition: 'true' },
});

describe('graph diagnostics (more)', () => {
  it('reports DUPLICATE_NODE_ID with the node path', () => {
    const diagnostics = diagnosticsOf(
      scenario(
        [start(), script('s', 'x = 1;', ['x']), script('s', 'y = 1;', ['y']), end()],
        [
          { from: 'start', to: 's' },
          { from: 's', to: 'end' },
        ],
      ),
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ code: 'DUPLICATE_NODE_ID', nodeId: 's', path: 'content.nodes[2].id' }),
    );
  });

  it('reports EDGE_INTO_START and EDGE_FROM_END', () => {
    const diagnostics = diagnosticsOf(
      scenario(
        [start(), script('s', 'x = 1;', ['x']), end()],
        [
          { from: 'start', to: 's' },
          { from: 's', to: 'end' },
          { from: 'end', to: 'start' },
        ],
      ),
    );
    expect(diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'EDGE_INTO_START', nodeId: 'start' }),
        expect.objectContaining({ code: 'EDGE_FROM_END', nodeId: 'end' }),
      ]),
    );
  });

  it('reports DECISION_BRANCH_INVALID for a decision edge without `when` and for two edges of one branch', () => {
    const withoutWhen = diagnosticsOf(
      scenario(
        [start(), decision(), end(), end('e2')],
        [
          { from: 'start', to: 'd' },
          { from: 'd', to: 'end', when: true },
          { from: 'd', to: 'e2' },
        ],
      ),
    );
    expect(withoutWhen).toContainEqual(
      expect.objectContaining({ code: 'DECISION_BRANCH_INVALID', nodeId: 'd', path: 'content.edges[2]' }),
    );
    const twice = diagnosticsOf(
      scenario(
        [start(), decision(), end(), end('e2'), end('e3')],
        [
          { from: 'start', to: 'd' },
          { from: 'd', to: 'end', when: true },
          { from: 'd', to: 'e2', when: true },
          { from: 'd', to: 'e3', when: false },
        ],
      ),
    );
    expect(twice).toContainEqual(
      expect.objectContaining({
        code: 'DECISION_BRANCH_INVALID',
        nodeId: 'd',
        message: expect.stringContaining('more than one'),
      }),
    );
  });

  it('reports WHEN_ON_NON_DECISION_EDGE', () => {
    const diagnostics = diagnosticsOf(
      scenario(
        [start(), script('s', 'x = 1;', ['x']), end()],
        [
          { from: 'start', to: 's' },
          { from: 's', to: 'end', when: true },
        ],
      ),
    );
    expect(diagnostics).toContainEqual(expect.objectContaining({ code: 'WHEN_ON_NON_DECISION_EDGE', nodeId: 's' }));
  });
});

describe('node diagnostics (more)', () => {
  it('reports DUPLICATE_INPUT naming the second declaration', () => {
    const diagnostics = diagnosticsOf(chain([input('age', 'INTEGER'), input('age', 'DOUBLE')], []));
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ code: 'DUPLICATE_INPUT', nodeId: 'start', path: expect.stringContaining('inputs[1]') }),
    );
  });

  it('reports TABLE_DUPLICATE_COLUMN', () => {
    const table: TestNode = {
      id: 't',
      type: 'DECISION_TABLE',
      settings: {
        hitPolicy: 'FIRST',
        inputs: [{ name: 'x' }, { name: 'x' }],
        outputs: [{ name: 'band' }],
        rules: [{ when: { x: '> 1' }, then: { band: 'A' } }],
      },
    };
    const diagnostics = diagnosticsOf(chain([input('x', 'DOUBLE')], [table]));
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        code: 'TABLE_DUPLICATE_COLUMN',
        nodeId: 't',
        path: expect.stringContaining('inputs[1].name'),
      }),
    );
  });

  it('reports SCORECARD_RANGE_INVALID for a bin whose min is above its max, and SCORECARD_BIN_EMPTY for a bin with neither range nor values', () => {
    const card = (bins: unknown[]): TestNode => ({
      id: 'card',
      type: 'SCORECARD',
      settings: {
        baseScore: 0,
        characteristics: [{ name: 'Age', variable: 'age', elsePoints: 0, bins }],
      },
    });
    const inverted = diagnosticsOf(chain([input('age', 'INTEGER')], [card([{ min: 60, max: 20, points: 5 }])]));
    expect(inverted).toContainEqual(
      expect.objectContaining({
        code: 'SCORECARD_RANGE_INVALID',
        nodeId: 'card',
        path: expect.stringContaining('bins[0]'),
      }),
    );
    const empty = diagnosticsOf(
      chain([input('age', 'INTEGER')], [card([{ min: 0, max: 20, points: 1 }, { points: 5 }])]),
    );
    expect(empty).toEqual([
      expect.objectContaining({
        code: 'SCORECARD_BIN_EMPTY',
        nodeId: 'card',
        path: 'nodeProperties.card.content.characteristics[0].bins[1]',
      }),
    ]);
  });
});

describe('external-reference diagnostics (more)', () => {
  it('reports LOOKUP_COLUMN_NOT_FOUND for an unknown key column and for an unknown returned column', async () => {
    const lookup = (keyColumn: string, columns: string[]): TestNode => ({
      id: 'l',
      type: 'DATA_LOOKUP',
      settings: { collection: 'customers', keyColumn, joinVariable: 'id', columns, mode: 'ONE', output: 'customer' },
    });
    const unknownKey = await engine.diagnose(chain([input('id', 'INTEGER')], [lookup('code', ['name'])]), {
      ownerId: 1,
    });
    expect(unknownKey).toContainEqual(
      expect.objectContaining({
        code: 'LOOKUP_COLUMN_NOT_FOUND',
        nodeId: 'l',
        path: expect.stringContaining('keyColumn'),
      }),
    );
    const unknownColumn = await engine.diagnose(chain([input('id', 'INTEGER')], [lookup('id', ['name', 'colour'])]), {
      ownerId: 1,
    });
    expect(unknownColumn).toContainEqual(
      expect.objectContaining({
        code: 'LOOKUP_COLUMN_NOT_FOUND',
        nodeId: 'l',
        path: expect.stringContaining('columns[1]'),
      }),
    );
  });
});
