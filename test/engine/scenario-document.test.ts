import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import {
  DocumentNormalizationError,
  inputVariables,
  normalizeScenarioDocument,
  validateScenarioDocument,
} from '../../src/engine/index.js';

const yamlDocument = `
content:
  nodes:
    - { id: start, type: START, name: Applicant }
    - { id: check, type: DECISION }
    - { id: approve, type: END }
    - { id: reject, type: END }
  edges:
    - { from: start, to: check }
    - { from: check, to: approve, when: true }
    - { from: check, to: reject, when: false }
nodeProperties:
  start:
    id: start
    type: START
    content:
      inputs:
        - { name: age, type: { type: INTEGER }, required: true, description: Age in years, tags: [applicant] }
        - { name: country, type: { type: DICTIONARY, name: countries, options: [DE, FR] }, required: false }
  check:
    id: check
    type: DECISION
    content: '{"language":"javascript","condition":"age >= 18"}'
`;

describe('normalizeScenarioDocument', () => {
  it('turns contents given as objects (YAML import) into canonical JSON strings and keeps strings as given', () => {
    const doc = normalizeScenarioDocument(parseYaml(yamlDocument));
    expect(typeof doc.content).toBe('string');
    expect(JSON.parse(doc.content).nodes).toHaveLength(4);
    expect(JSON.parse(doc.nodeProperties.start.content).inputs[0].name).toBe('age');
    expect(doc.nodeProperties.check.content).toBe('{"language":"javascript","condition":"age >= 18"}');
    expect(validateScenarioDocument(doc)).toEqual([]);
  });

  it("takes a nodeProperties entry's id from its key and its type from the graph node when they are left out", () => {
    const doc = normalizeScenarioDocument({
      content: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: 'check', type: 'DECISION' },
        ],
        edges: [],
      },
      nodeProperties: {
        start: { content: { inputs: [] } },
        check: { content: { language: 'javascript', condition: 'true' } },
      },
    });
    expect(doc.nodeProperties.start).toMatchObject({ id: 'start', type: 'START' });
    expect(doc.nodeProperties.check).toMatchObject({ id: 'check', type: 'DECISION' });
    expect(validateScenarioDocument(doc)).toEqual([]);
  });

  it('keeps an id or type that is given, so a contradiction is still reported', () => {
    const doc = normalizeScenarioDocument({
      content: { nodes: [{ id: 'check', type: 'DECISION' }], edges: [] },
      nodeProperties: {
        check: { id: 'other', type: 'SCRIPT', content: { language: 'javascript', code: '', outputs: [] } },
      },
    });
    expect(validateScenarioDocument(doc)).toEqual(
      expect.arrayContaining([
        { path: 'nodeProperties.check.id', message: 'must equal its key "check"' },
        { path: 'nodeProperties.check.type', message: 'is SCRIPT but graph node "check" is DECISION' },
      ]),
    );
  });

  it('says where a type cannot come from when an entry has no graph node and no type', () => {
    const doc = normalizeScenarioDocument({
      content: { nodes: [], edges: [] },
      nodeProperties: { ghost: { content: {} } },
    });
    expect(validateScenarioDocument(doc)).toEqual([
      { path: 'nodeProperties.ghost.type', message: 'is required: there is no graph node "ghost" to take it from' },
    ]);
  });

  it('rejects content strings that are not JSON, naming the path', () => {
    expect(() => normalizeScenarioDocument({ content: '{', nodeProperties: {} })).toThrow(DocumentNormalizationError);
    expect(() =>
      normalizeScenarioDocument({ content: {}, nodeProperties: { a: { id: 'a', type: 'END', content: 'nope' } } }),
    ).toThrow(/nodeProperties\.a\.content is not valid JSON/);
  });
});

describe('validateScenarioDocument', () => {
  it('reports shape problems with exact paths, checking node settings by the node type', () => {
    const doc = normalizeScenarioDocument({
      content: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: '1bad', type: 'SCRIPT' },
          { id: 'x', type: 'WHAT' },
        ],
        edges: [{ from: 'start' }],
      },
      nodeProperties: {
        start: {
          id: 'start',
          type: 'START',
          content: { inputs: [{ name: 'a', type: { type: 'DICTIONARY' }, required: true }] },
        },
        score: {
          id: 'score',
          type: 'SCORECARD',
          content: {
            baseScore: 1,
            characteristics: [
              {
                name: 'c',
                variable: 'a',
                elsePoints: 0,
                bins: [{ points: 1 }, { points: 1 }, { min: 'x', points: 1 }],
              },
            ],
          },
        },
        mismatch: { id: 'other', type: 'END', content: {} },
      },
    });
    expect(validateScenarioDocument(doc)).toEqual(
      expect.arrayContaining([
        { path: 'content.nodes[1].id', message: expect.stringContaining('pattern') },
        { path: 'content.nodes[2].type', message: expect.stringContaining('must be one of') },
        { path: 'content.edges[0].to', message: 'is required' },
        { path: 'nodeProperties.start.content.inputs[0].type.name', message: 'is required' },
        { path: 'nodeProperties.start.content.inputs[0].type.options', message: 'is required' },
        { path: 'nodeProperties.score.content.characteristics[0].bins[2].min', message: 'must be number' },
        { path: 'nodeProperties.mismatch.id', message: 'must equal its key "mismatch"' },
      ]),
    );
  });

  it('reports a NodeProperties type that differs from the graph node type', () => {
    const doc = normalizeScenarioDocument({
      content: { nodes: [{ id: 'a', type: 'SCRIPT' }], edges: [] },
      nodeProperties: { a: { id: 'a', type: 'END', content: {} } },
    });
    expect(validateScenarioDocument(doc)).toEqual([
      { path: 'nodeProperties.a.type', message: 'is END but graph node "a" is SCRIPT' },
    ]);
  });
});

describe('inputVariables', () => {
  it('returns the START node inputs', () => {
    expect(
      inputVariables(normalizeScenarioDocument(parseYaml(yamlDocument))).map((v) => [v.name, v.type.type, v.required]),
    ).toEqual([
      ['age', 'INTEGER', true],
      ['country', 'DICTIONARY', false],
    ]);
  });
});

describe('spec/openapi.json', () => {
  const spec = JSON.parse(readFileSync(new URL('../../spec/openapi.json', import.meta.url), 'utf8'));
  const names = [
    'ScenarioGraph',
    'GraphNode',
    'GraphEdge',
    'NodeType',
    'MergeType',
    'StartNodeSettings',
    'EndNodeSettings',
    'ScriptNodeSettings',
    'DecisionNodeSettings',
    'DecisionTableNodeSettings',
    'ScorecardNodeSettings',
    'DataLookupNodeSettings',
    'ScenarioCallNodeSettings',
    'HttpCallNodeSettings',
    'VariableInfo',
    'VariableType',
    'StringVariableType',
    'DoubleVariableType',
    'IntegerVariableType',
    'BooleanVariableType',
    'DictionaryVariableType',
    'MapVariableType',
    'VectorVariableType',
    'Diagnostic',
    'TraceEntry',
    'TestCaseReport',
  ];

  it.each(names)('describes %s', (name) => {
    expect(spec.components.schemas[name]).toBeDefined();
    expect(typeof spec.components.schemas[name].description).toBe('string');
  });
});
