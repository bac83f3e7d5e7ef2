import { afterAll, describe, expect, it } from '@jest/globals';
import {
  ScenarioCompileError,
  ScenarioEngine,
  type Diagnostic,
  type ScenarioDocument,
} from '../../src/engine/index.js';
import { chain, fakePorts, input, memoryLookups, scenario, script, type TestNode } from './support/scenario-builder.js';

const engine = new ScenarioEngine({
  ports: fakePorts({
    lookups: memoryLookups({ customers: { rows: [{ id: 1, name: 'a', segment: 'x' }], indexed: ['id'] } }),
    scenarios: {
      resolveDeployed: async ({ name }) => (name === 'deployed' ? { cacheKey: 'd', document: chain([], []) } : null),
    },
  }),
});
afterAll(() => engine.dispose());
let version = 0;

function diagnosticsOf(doc: ScenarioDocument): Diagnostic[] {
  try {
    engine.compile(`diag-${++version}`, doc);
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioCompileError);
    return (error as ScenarioCompileError).diagnostics;
  }
  return [];
}
const codes = (doc: ScenarioDocument) => diagnosticsOf(doc).map((d) => d.code);
const start = (inputs: unknown[] = []): TestNode => ({ id: 'start', type: 'START', settings: { inputs } });
const end = (id = 'end'): TestNode => ({ id, type: 'END' });

describe('graph diagnostics', () => {
  it('reports NO_START_NODE and NO_END_NODE', () => {
    expect(codes(scenario([script('s', 'x = 1;', ['x'])], []))).toEqual(
      expect.arrayContaining(['NO_START_NODE', 'NO_END_NODE']),
    );
  });

  it('reports MULTIPLE_START_NODES', () => {
    expect(
      codes(
        scenario(
          [start(), { id: 'start2', type: 'START', settings: { inputs: [] } }, end()],
          [
            { from: 'start', to: 'end' },
            { from: 'start2', to: 'end' },
          ],
        ),
      ),
    ).toContain('MULTIPLE_START_NODES');
  });

  it('reports UNKNOWN_EDGE_TARGET and UNKNOWN_EDGE_SOURCE with the edge path', () => {
    const diagnostics = diagnosticsOf(
      scenario(
        [start(), end()],
        [
          { from: 'start', to: 'end' },
          { from: 'start', to: 'nowhere' },
          { from: 'ghost', to: 'end' },
        ],
      ),
    );
    expect(diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'UNKNOWN_EDGE_TARGET', path: 'content.edges[1].to' }),
        expect.objectContaining({ code: 'UNKNOWN_EDGE_SOURCE', path: 'content.edges[2].from' }),
      ]),
    );
  });

  it('reports a CYCLE naming the nodes on it', () => {
    const diagnostics = diagnosticsOf(
      scenario(
        [
          start(),
          script('a', 'x = 1;', ['x']),
          script('b', 'y = 1;', ['y']),
          { id: 'd', type: 'DECISION', settings: { language: 'javascript', condition: 'true' } },
          end(),
        ],
        [
          { from: 'start', to: 'a' },
          { from: 'a', to: 'b' },
          { from: 'b', to: 'd' },
          { from: 'd', to: 'a', when: true },
          { from: 'd', to: 'end', when: false },
        ],
      ),
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ code: 'CYCLE', message: expect.stringContaining('a → b → d → a') }),
    );
  });

  it('reports UNREACHABLE_END, UNREACHABLE_NODE and PATH_WITHOUT_END', () => {
    expect(
      codes(scenario([start(), script('dead', 'x = 1;', ['x']), end(), end('island')], [{ from: 'start', to: 'end' }])),
    ).toEqual(expect.arrayContaining(['UNREACHABLE_END', 'UNREACHABLE_NODE', 'PATH_WITHOUT_END']));
  });

  it('reports DECISION_BRANCH_MISSING and MULTIPLE_OUTGOING_EDGES', () => {
    const diagnostics = diagnosticsOf(
      scenario(
        [
          start(),
          { id: 'd', type: 'DECISION', settings: { language: 'javascript', condition: 'true' } },
          end(),
          end('e2'),
        ],
        [
          { from: 'start', to: 'd' },
          { from: 'start', to: 'e2' },
          { from: 'd', to: 'end', when: true },
        ],
      ),
    );
    expect(diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: 'DECISION_BRANCH_MISSING',
          nodeId: 'd',
          message: expect.stringContaining('when: false'),
        }),
        expect.objectContaining({ code: 'MULTIPLE_OUTGOING_EDGES', nodeId: 'start' }),
      ]),
    );
  });

  it('reports NODE_PROPERTIES_MISSING and NODE_PROPERTIES_ORPHAN', () => {
    const doc = scenario(
      [start(), { id: 's', type: 'SCRIPT' }, end()],
      [
        { from: 'start', to: 's' },
        { from: 's', to: 'end' },
      ],
    );
    doc.nodeProperties.other = { id: 'other', type: 'END', content: '{}' };
    expect(codes(doc)).toEqual(expect.arrayContaining(['NODE_PROPERTIES_MISSING', 'NODE_PROPERTIES_ORPHAN']));
  });

  it('reports every problem of a document at once', () => {
    const diagnostics = diagnosticsOf(
      scenario(
        [
          start(),
          script('s', 'x = ;', ['x']),
          { id: 'd', type: 'DECISION', settings: { language: 'javascript', condition: 'y > 1' } },
          end(),
        ],
        [
          { from: 'start', to: 's' },
          { from: 's', to: 'd' },
          { from: 'd', to: 'end', when: true },
          { from: 'x', to: 'end' },
        ],
      ),
    );
    expect(diagnostics.map((d) => d.code).sort()).toEqual([
      'DECISION_BRANCH_MISSING',
      'SCRIPT_SYNTAX_ERROR',
      'UNKNOWN_EDGE_SOURCE',
    ]);
  });
});

describe('code and variable diagnostics', () => {
  it('reports SCRIPT_SYNTAX_ERROR with line and column relative to the node code', () => {
    const [diagnostic] = diagnosticsOf(chain([], [script('calc', 'const a = 1;\nconst b = a +* 2;', ['b'])]));
    expect(diagnostic).toMatchObject({
      code: 'SCRIPT_SYNTAX_ERROR',
      nodeId: 'calc',
      line: 2,
      column: 14,
      path: 'nodeProperties.calc.content.code',
    });
  });

  it('reports EXPRESSION_SYNTAX_ERROR in a decision condition', () => {
    const doc = scenario(
      [
        start(),
        { id: 'd', type: 'DECISION', settings: { language: 'javascript', condition: 'a >' } },
        end(),
        end('e2'),
      ],
      [
        { from: 'start', to: 'd' },
        { from: 'd', to: 'end', when: true },
        { from: 'd', to: 'e2', when: false },
      ],
    );
    expect(diagnosticsOf(doc)).toEqual([
      expect.objectContaining({
        code: 'EXPRESSION_SYNTAX_ERROR',
        nodeId: 'd',
        path: 'nodeProperties.d.content.condition',
      }),
    ]);
  });

  it('reports UNDEFINED_VARIABLE for a variable only a later node defines', () => {
    const diagnostics = diagnosticsOf(
      chain(
        [input('a', 'INTEGER')],
        [script('first', 'b = a + later;', ['b']), script('second', 'later = 1;', ['later'])],
      ),
    );
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: 'UNDEFINED_VARIABLE',
        nodeId: 'first',
        message: expect.stringContaining('"later"'),
      }),
    ]);
  });

  it('reports UNDEFINED_VARIABLE for explicit references (END outputs, table columns, scorecard variables, lookup keys)', () => {
    const diagnostics = diagnosticsOf(
      chain(
        [],
        [
          {
            id: 't',
            type: 'DECISION_TABLE',
            settings: { hitPolicy: 'FIRST', inputs: [{ name: 'missing1' }], outputs: [{ name: 'o' }], rules: [] },
          },
          {
            id: 'c',
            type: 'SCORECARD',
            settings: {
              baseScore: 0,
              characteristics: [{ name: 'x', variable: 'missing2', elsePoints: 0, bins: [{ min: 0, points: 1 }] }],
            },
          },
          {
            id: 'l',
            type: 'DATA_LOOKUP',
            settings: {
              collection: 'customers',
              keyColumn: 'id',
              joinVariable: 'missing3',
              mode: 'ONE',
              output: 'row',
            },
          },
        ],
        { outputs: ['missing4'] },
      ),
    );
    expect(diagnostics.filter((d) => d.code === 'UNDEFINED_VARIABLE').map((d) => d.nodeId)).toEqual([
      't',
      'c',
      'l',
      'end',
    ]);
  });

  it('reports SCRIPT_OUTPUT_SHADOWED when a script declares its own output', () => {
    expect(codes(chain([], [script('s', 'let x = 1;', ['x'])]))).toEqual(['SCRIPT_OUTPUT_SHADOWED']);
  });

  it('reports INVALID_VARIABLE_NAME for outputs that would shadow sandbox globals', () => {
    expect(codes(chain([], [script('s', 'Math = 1;', ['Math'])]))).toContain('INVALID_VARIABLE_NAME');
  });

  it('reports TABLE_CELL_INVALID naming node, rule and column', () => {
    const diagnostics = diagnosticsOf(
      chain(
        [input('age', 'INTEGER'), input('kind', 'STRING')],
        [
          {
            id: 'table',
            type: 'DECISION_TABLE',
            settings: {
              hitPolicy: 'FIRST',
              inputs: [
                { name: 'age', type: 'NUMBER' },
                { name: 'kind', type: 'STRING' },
              ],
              outputs: [{ name: 'o' }],
              rules: [
                { when: { age: '> 5' } },
                { when: { age: '> abc' } },
                { when: { kind: '< 3' } },
                { when: { age: '[5..1]' } },
                { when: { nope: 1 } },
              ],
            },
          },
        ],
      ),
    );
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: 'TABLE_CELL_INVALID',
        nodeId: 'table',
        path: 'nodeProperties.table.content.rules[1].when.age',
        message: expect.stringContaining('rule 1, column "age"'),
      }),
      expect.objectContaining({ code: 'TABLE_CELL_INVALID', path: 'nodeProperties.table.content.rules[2].when.kind' }),
      expect.objectContaining({ code: 'TABLE_CELL_INVALID', path: 'nodeProperties.table.content.rules[3].when.age' }),
      expect.objectContaining({
        code: 'TABLE_UNKNOWN_COLUMN',
        path: 'nodeProperties.table.content.rules[4].when.nope',
      }),
    ]);
  });

  it('reports SCORECARD_BINS_OVERLAP for overlapping ranges and shared categories', () => {
    const diagnostics = diagnosticsOf(
      chain(
        [input('age', 'INTEGER')],
        [
          {
            id: 'card',
            type: 'SCORECARD',
            settings: {
              baseScore: 0,
              characteristics: [
                {
                  name: 'age',
                  variable: 'age',
                  elsePoints: 0,
                  bins: [
                    { min: 0, max: 30, points: 1 },
                    { min: 30, max: 50, points: 2 },
                    { min: 45, points: 3 },
                  ],
                },
                {
                  name: 'age2',
                  variable: 'age',
                  elsePoints: 0,
                  bins: [
                    { max: 10, maxInclusive: true, points: 1 },
                    { min: 10, points: 2 },
                  ],
                },
                {
                  name: 'cat',
                  variable: 'age',
                  elsePoints: 0,
                  bins: [
                    { values: ['A', 'B'], points: 1 },
                    { values: ['B'], points: 2 },
                  ],
                },
              ],
            },
          },
        ],
      ),
    );
    expect(diagnostics.map((d) => [d.code, d.path])).toEqual([
      ['SCORECARD_BINS_OVERLAP', 'nodeProperties.card.content.characteristics[0].bins[2]'],
      ['SCORECARD_BINS_OVERLAP', 'nodeProperties.card.content.characteristics[1].bins[1]'],
      ['SCORECARD_BINS_OVERLAP', 'nodeProperties.card.content.characteristics[2].bins[1]'],
    ]);
  });

  it('reports document shape problems with the exact path', () => {
    const diagnostics = diagnosticsOf(
      chain(
        [input('age', 'INTEGER')],
        [
          {
            id: 'score',
            type: 'SCORECARD',
            settings: {
              baseScore: 0,
              characteristics: [
                {
                  name: 'age',
                  variable: 'age',
                  elsePoints: 0,
                  bins: [
                    { min: 0, points: 1 },
                    { max: 0, points: 1 },
                    { min: 'ten', points: 1 },
                  ],
                },
              ],
            },
          },
        ],
      ),
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        code: 'DOCUMENT_INVALID',
        nodeId: 'score',
        path: 'nodeProperties.score.content.characteristics[0].bins[2].min',
      }),
    );
  });
});

describe('diagnose', () => {
  const lookup = (settings: Record<string, unknown>) =>
    chain(
      [input('id', 'INTEGER')],
      [
        {
          id: 'l',
          type: 'DATA_LOOKUP',
          settings: {
            collection: 'customers',
            keyColumn: 'id',
            joinVariable: 'id',
            mode: 'ONE',
            output: 'row',
            ...settings,
          },
        },
      ],
    );
  const call = (name: string) =>
    chain([], [{ id: 'c', type: 'SCENARIO_CALL', settings: { scenario: name, outputVariable: 'out' } }]);

  it('returns [] for a sound document', async () => {
    expect(await engine.diagnose(lookup({}), { ownerId: 1 })).toEqual([]);
    expect(await engine.diagnose(call('deployed'), { ownerId: 1 })).toEqual([]);
  });

  it('reports a lookup against a missing collection, an unindexed key column and unknown columns', async () => {
    expect((await engine.diagnose(lookup({ collection: 'nope' }), { ownerId: 1 })).map((d) => d.code)).toEqual([
      'LOOKUP_COLLECTION_NOT_FOUND',
    ]);
    expect((await engine.diagnose(lookup({ keyColumn: 'name' }), { ownerId: 1 })).map((d) => d.code)).toEqual([
      'LOOKUP_KEY_NOT_INDEXED',
    ]);
    expect((await engine.diagnose(lookup({ columns: ['name', 'zzz'] }), { ownerId: 1 })).map((d) => d.path)).toEqual([
      'nodeProperties.l.content.columns[1]',
    ]);
  });

  it('reports a call to a scenario that is not deployed', async () => {
    expect(await engine.diagnose(call('ghost'), { ownerId: 1 })).toEqual([
      expect.objectContaining({ code: 'SCENARIO_NOT_DEPLOYED', nodeId: 'c' }),
    ]);
  });

  it('includes compile diagnostics', async () => {
    expect(
      (await engine.diagnose(chain([], [script('s', 'x = (;', ['x'])]), { ownerId: 1 })).map((d) => d.code),
    ).toEqual(['SCRIPT_SYNTAX_ERROR']);
  });
});

describe('code that escapes its wrapper', () => {
  it('is reported as SCRIPT_SYNTAX_ERROR instead of being spliced into generated code', () => {
    expect(codes(chain([], [script('s', 'x = 1; }); (function () {', ['x'])]))).toEqual(['SCRIPT_SYNTAX_ERROR']);
  });
});
