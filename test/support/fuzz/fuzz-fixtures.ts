import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import jwt from 'jsonwebtoken';
import { parse as parseYaml } from 'yaml';
import { everyNodeScenario, simpleScenario } from '../../scenarios/support/fixtures.js';
import type { TestApp } from '../test-app.js';
import { FUZZ_ROLES, type FuzzFixtures, type FuzzRole, type FuzzUser } from './fuzz-requests.js';
import { multipartOf } from './multipart-bodies.js';
import { renderBody } from './hostile-values.js';

/**
 * Arranges, through the API itself, the data fuzz requests name: three users (owner, admin,
 * stranger), the example credit decision imported and deployed for the owner (and imported for the
 * stranger), a collection with a unique index, a batch and an async run. Fails loudly when any step
 * does not answer as the docs say, since every later request would then miss its target.
 */

const EXAMPLE = new URL('../../../examples/credit-decision.yaml', import.meta.url);

export async function arrangeFuzzFixtures(testApp: TestApp, baseUrl: string): Promise<FuzzFixtures> {
  const made = await Promise.all(
    FUZZ_ROLES.map(async (role) => [role, await testApp.newUser({ prefix: `fuzz-${role}`, admin: role === 'admin' })]),
  );
  const users = Object.fromEntries(made) as Record<FuzzRole, FuzzUser>;
  const { owner, admin, stranger } = users;
  const call = async (
    method: string,
    path: string,
    user: FuzzUser,
    options: {
      query?: Record<string, string>;
      body?: string | Buffer;
      type?: string;
      scoreToken?: boolean;
      headers?: Record<string, string>;
    } = {},
  ) => {
    const query = new URLSearchParams(options.query ?? {});
    const headers: Record<string, string> = {
      ...options.headers,
      ...(options.type ? { 'content-type': options.type } : {}),
    };
    if (options.scoreToken) headers['score-token'] = user.scoreToken;
    else headers.authorization = `Bearer ${user.accessToken}`;
    const response = await fetch(`${baseUrl}${path}${query.size > 0 ? `?${query}` : ''}`, {
      method,
      headers,
      body: options.body,
    });
    const text = await response.text();
    if (response.status >= 300)
      throw new Error(`fuzz fixtures: ${method} ${path} answered ${response.status}: ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const context = (user: FuzzUser) => JSON.stringify({ actors: { requester: { username: user.username } } });

  const exampleYaml = readFileSync(EXAMPLE, 'utf8');
  const example = parseYaml(exampleYaml) as Record<string, unknown>;
  const scenarioName = String(example.name);
  const importYaml = (user: FuzzUser) =>
    call('POST', '/api/scenario/import', user, {
      query: { context: context(user) },
      body: exampleYaml,
      type: 'application/yaml',
    });
  const ownerImport = (await importYaml(owner)) as { scenarios: Array<{ scenarioId: string }> };
  const strangerImport = (await importYaml(stranger)) as { scenarios: Array<{ scenarioId: string }> };
  const scenarioId = ownerImport.scenarios[0].scenarioId;
  await call('POST', `/api/scenario/deploy/${scenarioId}`, owner, { query: { context: context(owner) } });
  const simple = simpleScenario('fuzz-simple');
  const simpleImport = (await call('POST', '/api/scenario/import', owner, {
    query: { context: context(owner) },
    body: JSON.stringify(simple),
    type: 'application/json',
  })) as { scenarios: Array<{ scenarioId: string }> };
  await call('POST', `/api/scenario/deploy/${simpleImport.scenarios[0].scenarioId}`, owner, {
    query: { context: context(owner) },
  });
  const exported = (await call('GET', '/api/scenario/export', owner, {
    query: { context: context(owner), name: scenarioName },
  })) as unknown as unknown[];
  const opened = (await call('GET', `/api/scenario/open/${scenarioId}`, owner, {
    query: { context: context(owner) },
  })) as { testCases: Array<{ id: string; name: string; variables: unknown[]; expression: unknown }> };

  const collection = 'fuzz_customers';
  const csv = 'customer_id,segment,limit\n1,RETAIL,5000\n2,SME,20000\n3,RETAIL,\n';
  const upload = multipartOf(csv);
  await call('POST', `/api/internaldata/collections/loadData/${collection}`, owner, {
    query: { fileName: 'customers.csv', indexes: 'customer_id,true' },
    body: renderBody(upload.body),
    type: upload.contentType,
  });

  // Looks customers up by a key of any text, so hostile score inputs reach the collection's SQL.
  const lookup = {
    name: 'fuzz-lookup',
    content: {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'find', type: 'DATA_LOOKUP' },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { from: 'start', to: 'find' },
        { from: 'find', to: 'end' },
      ],
    },
    nodeProperties: {
      start: { type: 'START', content: { inputs: [{ name: 'customerId', type: { type: 'STRING' }, required: true }] } },
      find: {
        type: 'DATA_LOOKUP',
        content: { collection, keyColumn: 'customer_id', joinVariable: 'customerId', mode: 'ONE', output: 'customer' },
      },
      end: { type: 'END', content: { outputs: ['customer'] } },
    },
  };
  const lookupImport = (await call('POST', '/api/scenario/import', owner, {
    query: { context: context(owner) },
    body: JSON.stringify(lookup),
    type: 'application/json',
  })) as { scenarios: Array<{ scenarioId: string; outcome: string }> };
  if (lookupImport.scenarios[0].outcome !== 'CREATED')
    throw new Error(`fuzz fixtures: the lookup scenario was not imported: ${JSON.stringify(lookupImport)}`);
  await call('POST', `/api/scenario/deploy/${lookupImport.scenarios[0].scenarioId}`, owner, {
    query: { context: context(owner) },
  });

  const inputs = [
    { income: 52000, existingDebt: 4000, age: 34, employment: 'EMPLOYED' },
    { income: 12000, existingDebt: 9000, age: 21, employment: 'UNEMPLOYED' },
    { income: 0, age: 18, employment: 'SELF_EMPLOYED' },
  ];
  const batch = (await call('POST', '/api/batch/score', owner, {
    scoreToken: true,
    body: JSON.stringify({ scenarioName, parameters: inputs }),
    type: 'application/json',
  })) as { batchTaskId: string };
  const requestId = `fuzz-${randomUUID()}`;
  await call('POST', `/api/scenario/code/scoreasync/${scenarioName}`, owner, {
    scoreToken: true,
    body: JSON.stringify(inputs[0]),
    type: 'application/json',
    headers: { 'x-sce-requestid': requestId },
  });

  const replayBody = { candidateVersion: '1', outputs: ['decision'], limit: 10, filter: { state: 'SUCCEEDED' } };
  const replay = (await call('POST', `/api/scenario/${scenarioId}/replays`, owner, {
    query: { context: context(owner) },
    body: JSON.stringify(replayBody),
    type: 'application/json',
  })) as { replayId: string };

  const { secret, usernameClaim, rolesClaim, issuer, audience } = testApp.config.jwt;
  const claims = (username: string) => ({ [usernameClaim]: username, [rolesClaim]: [] });
  const signOptions = { algorithm: 'HS256' as const, ...(issuer ? { issuer } : {}), ...(audience ? { audience } : {}) };
  const unsigned = (payload: object) =>
    `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`;
  const [header, , signature] = owner.accessToken.split('.');

  const everyNode = everyNodeScenario('fuzz-every-node');
  // Keep the HTTP node of the seed document away from real hosts.
  (everyNode.nodeProperties.bureau.content as { url: string }).url = 'http://fuzz.invalid/score/{{customerId}}';

  return {
    ...users,
    refusedAccessTokens: {
      expired: jwt.sign(
        { ...claims(owner.username), exp: Math.floor(Date.now() / 1000) - 60 },
        secret as string,
        signOptions,
      ),
      'wrong-secret': jwt.sign(claims(owner.username), 'not-the-secret', { ...signOptions, expiresIn: 3600 }),
      'alg-none': unsigned({ ...claims(owner.username), exp: Math.floor(Date.now() / 1000) + 3600 }),
      'tampered-payload': `${header}.${Buffer.from(JSON.stringify({ ...claims(admin.username), exp: Math.floor(Date.now() / 1000) + 3600 })).toString('base64url')}.${signature}`,
      'not-yet-valid': jwt.sign(claims(owner.username), secret as string, {
        ...signOptions,
        expiresIn: 7200,
        notBefore: 3600,
      }),
      'bad-username': jwt.sign(claims(' spaced name '), secret as string, { ...signOptions, expiresIn: 3600 }),
    },
    oddAccessTokens: {
      'no-exp': jwt.sign(claims(owner.username), secret as string, signOptions),
      'new-user': jwt.sign(claims(`fuzz-newcomer-${randomUUID().slice(0, 8)}`), secret as string, {
        ...signOptions,
        expiresIn: 3600,
      }),
    },
    scenarioIds: [scenarioId, simpleImport.scenarios[0].scenarioId, lookupImport.scenarios[0].scenarioId].map(String),
    strangerScenarioIds: [String(strangerImport.scenarios[0].scenarioId)],
    scenarioNames: [scenarioName, 'fuzz-simple', 'fuzz-lookup'],
    testCaseIds: opened.testCases.map((testCase) => String(testCase.id)),
    collections: [collection],
    collectionColumns: ['customer_id', 'segment', 'limit'],
    batchTaskIds: [batch.batchTaskId],
    requestIds: [requestId],
    replayIds: [replay.replayId],
    bodies: {
      scoreScenario: [...inputs, { income: 50000, age: 30 }, { customerId: '1' }],
      scoreAsync: [...inputs, { customerId: '2' }],
      debugScenario: [...inputs, { customerId: '3' }],
      validateScenario: [...inputs, { income: 50000, age: 30 }],
      submitBatch: [
        { scenarioName, parameters: inputs },
        { scenarioName: 'fuzz-simple', parameters: [{ income: 1, age: 2 }] },
        { scenarioName: 'fuzz-lookup', parameters: [{ customerId: '1' }, { customerId: 'x' }] },
      ],
      importScenarios: [example, exported, simple, [simple, everyNode], lookup],
      updateScenarioTestCase: opened.testCases.map(({ name, variables, expression }) => ({
        name,
        variables,
        expression,
      })),
      loadCollectionData: [csv, 'customer_id,segment,limit\n4,SME,100\n5,"RETAIL, online",0\n'],
      startReplay: [
        replayBody,
        { candidateVersion: 'develop', outputs: ['decision', 'score'], sampleSize: 3 },
        { candidateVersion: '7', outputs: ['x'] },
      ],
      createInputVariablesFromCsv: [
        'required;name;type;description;tags\ntrue;income;DOUBLE;Yearly income;money,applicant\nfalse;segment;RETAIL#SME;;\ntrue;age;INTEGER\n',
      ],
    },
  };
}
