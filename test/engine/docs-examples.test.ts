import { afterAll, describe, expect, it } from '@jest/globals';
import {
  normalizeScenarioDocument,
  ScenarioEngine,
  validateScenarioDocument,
  type EnginePorts,
  type HttpRequest,
  type ScenarioDocument,
  type TestCaseSpec,
} from '../../src/engine/index.js';
import { docsExamples, testCaseVariables, type DocsExample, type DocsRun } from '../support/docs-examples.js';
import { fakePorts, memoryLookups } from './support/scenario-builder.js';

/**
 * What docs/scenarios.md promises must hold: every example is compiled and every `runs` block after it is run,
 * with its documented result (or error, END node, trace, outgoing request) asserted.
 */
const { examples, canonical } = docsExamples(new URL('../../docs/scenarios.md', import.meta.url));

// One engine; the ports answer from the fixtures of the run in progress (collections, callees, HTTP answers).
let current: DocsRun = { given: {} };
const sentRequests: HttpRequest[] = [];
const ports: EnginePorts = {
  lookups: {
    lookup: (request) => lookupsOf(current).lookup(request),
    describe: (request) => lookupsOf(current).describe(request),
  },
  scenarios: {
    async resolveDeployed({ name }) {
      const callee = current.scenarios?.[name];
      return callee
        ? { cacheKey: `docs-callee:${name}:${JSON.stringify(callee)}`, document: calleeDocument(callee) }
        : null;
    },
  },
  http: {
    async request(request) {
      sentRequests.push(request);
      if (!current.http) throw new Error('this run documents no HTTP exchange');
      return current.http.response;
    },
  },
};
const engine = new ScenarioEngine({ ports: { ...fakePorts(), ...ports } });
afterAll(async () => {
  await engine.dispose();
});

const lookupsOf = (run: DocsRun) =>
  memoryLookups(
    Object.fromEntries(
      Object.entries(run.collections ?? {}).map(([name, rows]) => [
        name,
        { rows, indexed: Object.keys(rows[0] ?? {}) },
      ]),
    ),
  );

/** Input declarations for values as documented: optional, typed by the first non-null value seen. */
function inferredInputs(samples: Record<string, unknown>[]) {
  const types = new Map<string, string>();
  for (const sample of samples) {
    for (const [name, value] of Object.entries(sample)) {
      const type =
        value === null
          ? undefined
          : Array.isArray(value)
            ? 'VECTOR'
            : typeof value === 'object'
              ? 'MAP'
              : typeof value === 'number'
                ? 'DOUBLE'
                : typeof value === 'boolean'
                  ? 'BOOLEAN'
                  : 'STRING';
      if (type && !types.has(name)) types.set(name, type);
      if (!types.has(name) && value === null) types.set(name, '');
    }
  }
  return [...types].map(([name, type]) => ({ name, type: { type: type || 'STRING' }, required: false }));
}

/** A deployed callee as documented: it fails unless called with exactly `receives`, and answers `returns`. */
function calleeDocument(callee: {
  receives: Record<string, unknown>;
  returns: Record<string, unknown>;
}): ScenarioDocument {
  const names = Object.keys(callee.receives);
  const outputs = Object.keys(callee.returns);
  const code =
    `const got = JSON.stringify({ ${names.map((n) => `${n}: ${n}`).join(', ')} });\n` +
    `if (got !== ${JSON.stringify(JSON.stringify(callee.receives))}) throw new Error("called with " + got);\n` +
    outputs.map((n) => `${n} = ${JSON.stringify(callee.returns[n])};`).join('\n');
  return normalizeScenarioDocument({
    content: {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'answer', type: 'SCRIPT' },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { from: 'start', to: 'answer' },
        { from: 'answer', to: 'end' },
      ],
    },
    nodeProperties: {
      start: { content: { inputs: inferredInputs([callee.receives]) } },
      answer: { content: { language: 'javascript', code, outputs } },
      end: { content: { outputs } },
    },
  });
}

/**
 * A one-kind example (its nodes, nodeProperties and edges) made runnable: a START declaring the documented
 * inputs (unless the example is the START node), the example's nodes in a line, END nodes for edge targets
 * outside the example, and an END returning every variable after the last node.
 */
function runnable(example: DocsExample): ScenarioDocument {
  const fragment = example.document as {
    nodes: Array<{ id: string; type: string }>;
    edges?: Array<{ from: string; to: string; when?: boolean }>;
    nodeProperties: Record<string, unknown>;
  };
  const nodes = [...fragment.nodes];
  const edges = [...(fragment.edges ?? [])];
  const nodeProperties = { ...fragment.nodeProperties } as Record<string, { content: unknown }>;
  if (!nodes.some((node) => node.type === 'START')) {
    nodes.unshift({ id: 'docStart', type: 'START' });
    nodeProperties.docStart = { content: { inputs: inferredInputs(example.runs.map((run) => run.given ?? {})) } };
  }
  for (const edge of edges) if (!nodes.some((node) => node.id === edge.to)) nodes.push({ id: edge.to, type: 'END' });
  const line = [...nodes];
  if (!nodes.some((node) => node.type === 'END')) line.push({ id: 'docEnd', type: 'END' });
  line.forEach((node, k) => {
    const next = line[k + 1];
    if (next && node.type !== 'END' && node.type !== 'DECISION' && !edges.some((edge) => edge.from === node.id))
      edges.push({ from: node.id, to: next.id });
  });
  return normalizeScenarioDocument({
    content: { nodes: line.filter((n, k, all) => all.indexOf(n) === k), edges },
    nodeProperties,
  });
}

const documentOf = (example: DocsExample): ScenarioDocument =>
  example.complete ? normalizeScenarioDocument(example.document as never) : runnable(example);

/** Whether the result is exactly the documented one (the example ends in its own END node) or contains it. */
const exactResult = (example: DocsExample): boolean =>
  example.complete ||
  (example.document as { nodes: Array<{ type: string }> }).nodes.some((node) => node.type === 'END');

describe('docs/scenarios.md', () => {
  it('has complete example scenarios and an example of every node kind', () => {
    expect(examples.filter((example) => example.complete).length).toBeGreaterThanOrEqual(3);
    const kinds = new Set(
      examples
        .flatMap(
          (example) =>
            (example.document as { content?: { nodes: Array<{ type: string }> }; nodes?: Array<{ type: string }> })
              .nodes ?? (example.document as { content: { nodes: Array<{ type: string }> } }).content.nodes,
        )
        .map((node) => node.type),
    );
    expect([...kinds].sort()).toEqual([
      'DATA_LOOKUP',
      'DECISION',
      'DECISION_TABLE',
      'END',
      'HTTP_CALL',
      'SCENARIO_CALL',
      'SCORECARD',
      'SCRIPT',
      'START',
    ]);
  });

  it('shows what every example does (runs or test reports)', () => {
    expect(
      examples.filter((example) => example.runs.length === 0 && !example.testReports).map((example) => example.title),
    ).toEqual([]);
  });

  it.each(examples.map((example) => [example.title, example] as const))(
    '%s is a valid document in the shortest form and compiles',
    (_title, example) => {
      for (const props of Object.values(
        (example.document as { nodeProperties: Record<string, object> }).nodeProperties,
      )) {
        expect(Object.keys(props)).toEqual(['content']);
      }
      const doc = documentOf(example);
      expect(validateScenarioDocument(doc)).toEqual([]);
      expect(() => engine.compile(`docs:${example.title}`, doc)).not.toThrow();
    },
  );

  const runs = examples.flatMap((example) =>
    example.runs.map((run, k) => [`${example.title}, run ${k + 1}`, example, run] as const),
  );
  it.each(runs)('%s gives the documented result', async (_title, example, run) => {
    current = run;
    sentRequests.length = 0;
    const compiled = engine.compile(`docs:${example.title}`, documentOf(example));
    const outcome = engine.run(compiled, run.given ?? {}, { ownerId: 1, trace: true });
    if (run.error) {
      await expect(outcome).rejects.toMatchObject(run.error);
      return;
    }
    const { result, trace } = await outcome;
    if (run.result) {
      if (exactResult(example)) expect(result).toEqual(run.result);
      else expect(result).toMatchObject(run.result);
    }
    if (run.end) expect(trace?.at(-1)).toMatchObject({ nodeId: run.end, type: 'END' });
    if (run.trace) expect(trace?.map(({ durationMicros: _micros, ...entry }) => entry)).toEqual(run.trace);
    if (run.http?.request) {
      expect(sentRequests.length).toBeGreaterThan(0);
      for (const sent of sentRequests) expect(sent).toMatchObject(run.http.request);
    }
  });

  const reported = examples.filter((example) => example.testReports);
  it.each(reported.map((example) => [example.title, example] as const))(
    '%s: its test cases report as documented',
    async (_title, example) => {
      const compiled = engine.compile(`docs:${example.title}`, documentOf(example));
      const testCases = (example.document as { testCases: Array<Record<string, unknown>> }).testCases.map(
        (testCase): TestCaseSpec => ({
          name: testCase.name as string,
          variables: testCaseVariables(testCase.variables),
          expression: testCase.expression as TestCaseSpec['expression'],
          ignore: testCase.ignore as boolean | undefined,
        }),
      );
      const reports = await engine.runTestCases(compiled, testCases, { ownerId: 1 });
      expect(reports).toEqual(example.testReports!.map((report) => expect.objectContaining(report)));
    },
  );

  it('shows the canonical (stored) form of the first example exactly', () => {
    expect(canonical).toBeDefined();
    const stored = normalizeScenarioDocument(examples[0].document as never);
    const parsed = (doc: ScenarioDocument) => ({
      content: JSON.parse(doc.content),
      nodeProperties: Object.fromEntries(
        Object.entries(doc.nodeProperties).map(([key, props]) => [
          key,
          { ...props, content: JSON.parse(props.content) },
        ]),
      ),
    });
    expect(parsed(canonical!)).toEqual(parsed(stored));
  });
});
