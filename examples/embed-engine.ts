/**
 * The scenario engine used in-process, without the HTTP service or a database: a program of your own (a test
 * harness, a benchmark, a batch tool) compiles scenario documents and runs them. docs/engine.md explains each
 * step; test/examples/embed-engine.test.ts runs this file and checks what it prints.
 *
 *   npm run --silent example:engine
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import {
  InputValidationError,
  normalizeScenarioDocument,
  ScenarioEngine,
  ScenarioRunError,
  type EnginePorts,
  type ScenarioDocument,
  type ScenarioDocumentInput,
} from '../src/engine/index.js';

// 1. Documents. A hand-written (or imported) document becomes the canonical form the engine takes.
const creditDecision = parseYaml(
  await readFile(new URL('./credit-decision.yaml', import.meta.url), 'utf8'),
) as ScenarioDocumentInput & {
  testCases: Array<{ name: string; variables: Record<string, unknown>; expression: { code: string } }>;
};
const creditDocument = normalizeScenarioDocument(creditDecision);

// A second scenario: looks a customer up and calls credit-decision with the customer's data.
const customerDocument = normalizeScenarioDocument({
  content: {
    nodes: [
      { id: 'start', type: 'START' },
      { id: 'customer', type: 'DATA_LOOKUP' },
      { id: 'credit', type: 'SCENARIO_CALL', prefix: 'credit_' },
      { id: 'end', type: 'END' },
    ],
    edges: [
      { from: 'start', to: 'customer' },
      { from: 'customer', to: 'credit' },
      { from: 'credit', to: 'end' },
    ],
  },
  nodeProperties: {
    start: { content: { inputs: [{ name: 'customerId', type: { type: 'INTEGER' }, required: true }] } },
    customer: {
      content: { collection: 'customers', keyColumn: 'id', joinVariable: 'customerId', mode: 'ONE', output: 'row' },
    },
    credit: {
      content: {
        scenario: 'credit-decision',
        inputs: { income: 'row.income', existingDebt: 'row.debt', age: 'row.age', employment: 'row.employment' },
        outputs: ['decision', 'score'],
      },
    },
    end: { content: { outputs: ['credit_decision', 'credit_score'] } },
  },
});

// 2. Ports: everything a scenario reaches outside itself. Here: collections and deployed scenarios in memory,
//    and no HTTP at all (the service plugs in MySQL collections, its deployed versions and createHttpPort).
const customers = [
  { id: 1, income: 52000, debt: 4000, age: 34, employment: 'EMPLOYED' },
  { id: 2, income: 12000, debt: 9000, age: 21, employment: 'UNEMPLOYED' },
];
const deployed = new Map<string, { cacheKey: string; document: ScenarioDocument }>([
  ['credit-decision', { cacheKey: 'credit-decision@1', document: creditDocument }],
]);
const ports: EnginePorts = {
  lookups: {
    async lookup({ collection, keyColumn, key, columns, mode }) {
      if (collection !== 'customers') throw new Error(`no collection ${collection}`);
      const rows = customers
        .filter((row) => row[keyColumn as keyof typeof row] === key)
        .map((row) =>
          columns ? Object.fromEntries(columns.map((c) => [c, row[c as keyof typeof row] ?? null])) : { ...row },
        );
      return mode === 'ONE' ? (rows[0] ?? null) : rows;
    },
    async describe({ collection }) {
      return collection === 'customers' ? { columns: Object.keys(customers[0]), indexedColumns: ['id'] } : null;
    },
  },
  scenarios: {
    async resolveDeployed({ name }) {
      return deployed.get(name) ?? null;
    },
  },
  http: {
    async request(request) {
      throw new Error(`this program makes no HTTP calls (${request.method} ${request.url})`);
    },
  },
};

// 3. One engine per process: it caches compilations by key and runs scenario code in engine host processes of
//    its own (two here), each tenant in sandboxes of its own. Nothing of a scenario runs in this process.
const engine = new ScenarioEngine({ ports, limits: { timeoutMs: 500 }, pool: { hosts: 2 } });
try {
  const credit = engine.compile('credit-decision@1', creditDocument);
  const lookup = engine.compile('customer-credit@1', customerDocument);
  const owner = { ownerId: 1 }; // the tenant: passed to every port call

  const scored = await engine.run(
    credit,
    { income: 52000, existingDebt: 4000, age: 34, employment: 'EMPLOYED' },
    owner,
  );
  const traced = await engine.run(
    credit,
    { income: 12000, existingDebt: 9000, age: 21, employment: 'UNEMPLOYED' },
    { ...owner, trace: true },
  );
  const viaLookup = await engine.run(lookup, { customerId: 2 }, owner);
  // Many runs in flight at once: the engine batches them per tenant onto its workers.
  const applicants = Array.from({ length: 200 }, (_, k) => ({
    income: 8000 + k * 400,
    existingDebt: 6000,
    age: 19 + (k % 50),
    employment: k % 3 === 0 ? 'UNEMPLOYED' : 'EMPLOYED',
  }));
  const decisions: Record<string, number> = {};
  for (const { result } of await Promise.all(applicants.map((applicant) => engine.run(credit, applicant, owner)))) {
    decisions[result.decision as string] = (decisions[result.decision as string] ?? 0) + 1;
  }
  const tests = await engine.runTestCases(
    credit,
    creditDecision.testCases.map((testCase) => ({
      name: testCase.name,
      variables: testCase.variables,
      expression: { language: 'javascript' as const, code: testCase.expression.code },
    })),
    owner,
  );
  let invalid: unknown = null;
  try {
    await engine.run(credit, { income: -5, age: 'old', employment: 'RETIRED' }, owner);
  } catch (error) {
    if (!(error instanceof InputValidationError)) throw error;
    invalid = error.violations;
  }
  let failed: unknown = null;
  try {
    await engine.run(lookup, { customerId: 3 }, owner); // no such customer: the call's input expressions read null.income
  } catch (error) {
    if (!(error instanceof ScenarioRunError)) throw error;
    failed = { code: error.code, nodeId: error.nodeId };
  }

  console.log(
    JSON.stringify(
      {
        scored: scored.result,
        tracedPath: traced.trace?.map((entry) => entry.nodeId),
        traced: traced.result,
        viaLookup: viaLookup.result,
        decisions,
        tests: tests.map(({ name, passed }) => ({ name, passed })),
        invalid,
        failed,
      },
      null,
      2,
    ),
  );
} finally {
  await engine.dispose();
}
