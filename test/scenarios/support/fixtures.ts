import request from 'supertest';
import type { TestApp, TestUser } from '../../support/test-app.js';

/** A scenario import as a hand-written client sends it: contents as objects. */
export interface ImportItem {
  name: string;
  description?: string;
  content: unknown;
  nodeProperties: Record<string, { id?: string; type: string; content: unknown }>;
  testCases?: unknown[];
}

const node = (id: string, type: string, content: unknown) => ({ id, type, content });

/** START → SCRIPT → END computing `score = income / 1000 + age`, with one passing test case. */
export function simpleScenario(name: string, options: { code?: string; testExpression?: string } = {}): ImportItem {
  return {
    name,
    description: 'income and age to a score',
    content: {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'calc', type: 'SCRIPT', name: 'Score' },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { from: 'start', to: 'calc' },
        { from: 'calc', to: 'end' },
      ],
    },
    nodeProperties: {
      start: node('start', 'START', {
        inputs: [
          { name: 'income', type: { type: 'DOUBLE' }, required: true, description: 'yearly income' },
          { name: 'age', type: { type: 'INTEGER' }, required: true },
        ],
      }),
      calc: node('calc', 'SCRIPT', {
        language: 'javascript',
        code: options.code ?? 'score = income / 1000 + age;',
        outputs: ['score'],
      }),
      end: node('end', 'END', { outputs: ['score'] }),
    },
    testCases: [
      {
        name: 'typical applicant',
        variables: [
          { variableName: 'income', value: 50000 },
          { variableName: 'age', value: 30 },
        ],
        expression: { code: options.testExpression ?? 'score === 80', language: 'javascript' },
      },
    ],
  };
}

/** A scenario using every node kind (START, SCRIPT, DATA_LOOKUP, DECISION_TABLE, SCORECARD, SCENARIO_CALL, HTTP_CALL, DECISION, END×2). */
export function everyNodeScenario(name: string): ImportItem {
  return {
    name,
    description: 'uses every node kind',
    content: {
      nodes: [
        { id: 'start', type: 'START', name: 'Applicant' },
        { id: 'prep', type: 'SCRIPT', name: 'Prepare' },
        { id: 'lookup', type: 'DATA_LOOKUP', name: 'Customer record' },
        { id: 'segment', type: 'DECISION_TABLE', name: 'Segment' },
        { id: 'card', type: 'SCORECARD', name: 'Scorecard' },
        { id: 'sub', type: 'SCENARIO_CALL', name: 'Fraud check', prefix: 'fraud_' },
        { id: 'bureau', type: 'HTTP_CALL', name: 'Bureau' },
        { id: 'check', type: 'DECISION', name: 'Good enough?' },
        { id: 'approve', type: 'END', name: 'Approve' },
        { id: 'decline', type: 'END', name: 'Decline' },
      ],
      edges: [
        { from: 'start', to: 'prep' },
        { from: 'prep', to: 'lookup' },
        { from: 'lookup', to: 'segment' },
        { from: 'segment', to: 'card' },
        { from: 'card', to: 'sub' },
        { from: 'sub', to: 'bureau' },
        { from: 'bureau', to: 'check' },
        { from: 'check', to: 'approve', when: true },
        { from: 'check', to: 'decline', when: false },
      ],
    },
    nodeProperties: {
      start: node('start', 'START', {
        inputs: [
          { name: 'customerId', type: { type: 'STRING' }, required: true, tags: ['id'] },
          { name: 'income', type: { type: 'DOUBLE' }, required: true },
          { name: 'age', type: { type: 'INTEGER' }, required: true },
          { name: 'student', type: { type: 'BOOLEAN' }, required: false },
          {
            name: 'channel',
            type: { type: 'DICTIONARY', name: 'channel', options: ['WEB', 'BRANCH'] },
            required: true,
          },
          { name: 'extra', type: { type: 'MAP' }, required: false },
          { name: 'history', type: { type: 'VECTOR' }, required: false },
        ],
        validators: [{ variable: 'age', expression: 'value >= 18', message: 'must be an adult' }],
      }),
      prep: node('prep', 'SCRIPT', { language: 'javascript', code: 'monthly = income / 12;', outputs: ['monthly'] }),
      lookup: node('lookup', 'DATA_LOOKUP', {
        collection: 'customers',
        keyColumn: 'id',
        joinVariable: 'customerId',
        columns: ['risk'],
        mode: 'ONE',
        output: 'customer',
      }),
      segment: node('segment', 'DECISION_TABLE', {
        hitPolicy: 'FIRST',
        inputs: [
          { name: 'age', type: 'NUMBER' },
          { name: 'channel', type: 'STRING' },
        ],
        outputs: [{ name: 'segmentName' }],
        rules: [
          { description: 'young online', when: { age: '< 30', channel: '"WEB"' }, then: { segmentName: 'young-web' } },
          { when: { age: { gte: 30 } }, then: { segmentName: 'mature' } },
          { then: { segmentName: 'other' } },
        ],
      }),
      card: node('card', 'SCORECARD', {
        baseScore: 100,
        scoreVariable: 'points',
        reasonCodesVariable: 'reasons',
        maxReasonCodes: 2,
        characteristics: [
          {
            name: 'Age',
            variable: 'age',
            reasonCode: 'AGE',
            elsePoints: 0,
            bins: [
              { max: 25, points: 5 },
              { min: 25, max: 60, points: 20 },
              { min: 60, points: 10 },
            ],
          },
          {
            name: 'Channel',
            variable: 'channel',
            elsePoints: 0,
            bins: [
              { values: ['WEB'], points: 3 },
              { values: ['BRANCH'], points: 7, label: 'in person' },
            ],
          },
        ],
      }),
      sub: node('sub', 'SCENARIO_CALL', {
        scenario: 'fraud-check',
        inputs: { customerId: 'customerId' },
        outputs: ['flagged'],
      }),
      bureau: node('bureau', 'HTTP_CALL', {
        method: 'GET',
        url: 'https://bureau.example.com/score/{{customerId}}',
        headers: { Accept: 'application/json' },
        timeoutMs: 2000,
        output: 'bureauReply',
        catchErrors: true,
      }),
      check: node('check', 'DECISION', { language: 'javascript', condition: 'points >= 110 && !fraud_flagged' }),
      approve: node('approve', 'END', { outputs: ['points', 'reasons', 'segmentName'] }),
      decline: node('decline', 'END', {}),
    },
    // Variables written as before 1.9 (`name`, not `variableName`): still accepted.
    testCases: [
      {
        name: 'mature web customer',
        variables: [
          { name: 'customerId', value: 'c-1' },
          { name: 'income', value: 60000 },
          { name: 'age', value: 40 },
          { name: 'channel', value: 'WEB' },
        ],
        expression: { code: 'points === 123', language: 'javascript' },
      },
      { name: 'ignored one', variables: [{ name: 'customerId' }], expression: { code: 'true' }, ignore: true },
    ],
  };
}

export const bearer = (user: TestUser) => ({ Authorization: `Bearer ${user.accessToken}` });

/** Imports scenarios as `user` (JSON) and returns the import report's outcomes. */
export async function importAs(
  testApp: TestApp,
  user: TestUser,
  body: unknown,
  query: Record<string, string | boolean> = {},
) {
  const response = await request(testApp.app)
    .post('/api/scenario/import')
    .query({ context: user.context(), ...query })
    .set(bearer(user))
    .send(body as object);
  if (response.status !== 200) throw new Error(`import failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.scenarios as {
    name: string;
    scenarioId: string;
    outcome: string;
    version?: string;
    diagnostics?: unknown[];
  }[];
}

/** Imports one scenario and returns its id. */
export async function createScenario(testApp: TestApp, user: TestUser, item: ImportItem): Promise<string> {
  const [outcome] = await importAs(testApp, user, item);
  return outcome.scenarioId;
}
