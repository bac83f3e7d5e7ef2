import { randomUUID } from 'node:crypto';
import type { ContractClient } from './contract-client.js';
import { missingId, missingName, probePath } from './sample-values.js';
import type { JsonObject, ServedSpec } from './served-spec.js';

/**
 * Checks that change nothing on the deployment, whatever it holds:
 * - every operation without credentials (401 before anything else);
 * - a wrong bearer token and a wrong score token (401);
 * - with a bearer token: the collections and scenarios the user can read, and 404s for names and ids
 *   that exist nowhere; createInputVariablesFromCsv, which only parses the CSV it is sent;
 * - with a score token: scoring, async and batch operations on a scenario that does not exist (404,
 *   refused before anything is stored) and unknown run and batch ids; a synchronous score of a scenario
 *   the caller names (CONTRACT_SCORE_SCENARIO; synchronous scoring stores nothing).
 */

export interface ReadOnlyOptions {
  /** `context` of management operations (CONTRACT_CONTEXT; `{}`: the token's user on their own scenarios). */
  context: unknown;
  hasBearer: boolean;
  hasScoreToken: boolean;
  score?: { scenario: string; inputs: JsonObject };
}

const VARIABLES_CSV =
  'required;name;type;description;tags\ntrue;amount;DOUBLE;An amount;contract\nfalse;segment;STRING;;\n';

export async function runReadOnlyChecks(
  client: ContractClient,
  spec: ServedSpec,
  options: ReadOnlyOptions,
): Promise<void> {
  for (const operation of spec.operations.values()) {
    if (operation.security.length === 0) continue;
    await client.call(operation.operationId, {
      label: 'without credentials',
      credential: 'none',
      path: probePath(spec, operation),
      expect: [401],
    });
  }
  const firstBearer = [...spec.operations.values()].find((operation) =>
    operation.security.some((name) => spec.securitySchemes[name]?.type === 'http'),
  );
  if (firstBearer)
    await client.call(firstBearer.operationId, {
      label: 'with an invalid bearer token',
      credential: 'invalidBearer',
      path: probePath(spec, firstBearer),
      expect: [401],
    });
  const firstScore = [...spec.operations.values()].find((operation) =>
    operation.security.some((name) => spec.securitySchemes[name]?.type === 'apiKey'),
  );
  if (firstScore)
    await client.call(firstScore.operationId, {
      label: 'with an invalid score token',
      credential: 'invalidScoreToken',
      path: probePath(spec, firstScore),
      expect: [401],
    });

  if (options.hasBearer) {
    await collectionReads(client);
    await scenarioReads(client, spec, options.context);
  }
  if (options.hasScoreToken) await executionReads(client, options.score);
}

async function collectionReads(client: ContractClient): Promise<void> {
  const list = await client.call('listCollections', { label: 'the collections', credential: 'bearer', expect: [200] });
  const first = Array.isArray(list.body) ? (list.body[0] as { name?: unknown } | undefined) : undefined;
  if (typeof first?.name === 'string') {
    const path = { collection_name: first.name };
    await client.call('getCollectionRows', {
      label: 'rows of an existing collection',
      credential: 'bearer',
      path,
      query: { limit: 5 },
      expect: [200],
    });
    await client.call('getCollectionColumns', {
      label: 'columns of an existing collection',
      credential: 'bearer',
      path,
      expect: [200],
    });
    await client.call('getCollectionIndexes', {
      label: 'indexes of an existing collection',
      credential: 'bearer',
      path,
      expect: [200],
    });
  }
  const missing = { collection_name: `contract_missing_${randomUUID().replace(/-/g, '').slice(0, 16)}` };
  await client.call('getCollectionRows', {
    label: 'rows of a collection that does not exist',
    credential: 'bearer',
    path: missing,
    expect: [404],
  });
  await client.call('getCollectionRows', {
    label: 'a limit below the minimum',
    credential: 'bearer',
    path: missing,
    query: { limit: 0 },
    expect: [400],
  });
  await client.call('getCollectionColumns', {
    label: 'columns of a collection that does not exist',
    credential: 'bearer',
    path: missing,
    expect: [404],
  });
  await client.call('getCollectionIndexes', {
    label: 'indexes of a collection that does not exist',
    credential: 'bearer',
    path: missing,
    expect: [404],
  });
}

async function scenarioReads(client: ContractClient, spec: ServedSpec, context: unknown): Promise<void> {
  const exported = await client.call('exportScenarios', {
    label: "the user's scenarios",
    credential: 'bearer',
    query: { context },
    expect: [200],
  });
  await client.call('exportScenarios', {
    label: "the user's scenarios as YAML (type=yaml)",
    credential: 'bearer',
    query: { context, type: 'yaml' },
    expect: [200],
    expectMediaType: 'application/yaml',
  });
  const first = Array.isArray(exported.body) ? (exported.body[0] as { scenarioId?: unknown } | undefined) : undefined;
  if (first?.scenarioId !== undefined) {
    const path = { id: String(first.scenarioId) };
    await client.call('openScenario', {
      label: 'an existing scenario',
      credential: 'bearer',
      path,
      query: { context },
      expect: [200],
    });
    await client.call('listScenarioVersions', {
      label: 'versions of an existing scenario',
      credential: 'bearer',
      path,
      query: { context },
      expect: [200],
    });
    await client.call('getScenarioInput', {
      label: 'inputs of an existing scenario',
      credential: 'bearer',
      path,
      query: { context },
      expect: [200],
    });
    await client.call('getScenarioInputVariableNames', {
      label: 'input names of an existing scenario',
      credential: 'bearer',
      path,
      query: { context },
      expect: [200],
    });
    if (client.has('getScenarioStatistics'))
      await client.call('getScenarioStatistics', {
        label: 'run statistics of an existing scenario',
        credential: 'bearer',
        path,
        query: { context },
        expect: [200],
      });
  }
  // getScenarioStatistics came after interface 1.9's operations: a deployment from before it does not serve it.
  const idReads = [
    'openScenario',
    'listScenarioVersions',
    'getScenarioInput',
    'getScenarioInputVariableNames',
    'getScenarioStatistics',
  ].filter((operationId) => client.has(operationId));
  for (const operationId of idReads) {
    const path = { id: missingId(spec, client.operation(operationId), 'id') };
    await client.call(operationId, {
      label: 'a scenario id that does not exist',
      credential: 'bearer',
      path,
      query: { context },
      expect: [404],
    });
  }
  // Debug and validate read a scenario and run it without storing anything; on an id that names nothing they answer 404.
  for (const operationId of ['debugScenario', 'validateScenario']) {
    const path = { id: missingId(spec, client.operation(operationId), 'id') };
    await client.call(operationId, {
      label: 'a scenario id that does not exist',
      credential: 'bearer',
      path,
      query: { context },
      body: { json: {} },
      expect: [404],
    });
  }
  await client.call('exportScenarios', {
    label: 'a scenario name that does not exist',
    credential: 'bearer',
    query: { context, name: missingName() },
    expect: [404],
  });
  await client.call('renameScenario', {
    label: 'renaming a scenario that does not exist',
    credential: 'bearer',
    path: { currentName: missingName(), newName: missingName() },
    query: { context },
    expect: [404],
  });
  await client.call('createInputVariablesFromCsv', {
    label: 'variables parsed from a CSV (nothing is stored)',
    credential: 'bearer',
    query: { context },
    body: { multipart: { field: 'file', fileName: 'variables.csv', contentType: 'text/csv', content: VARIABLES_CSV } },
    expect: [200],
  });
}

async function executionReads(client: ContractClient, score: ReadOnlyOptions['score']): Promise<void> {
  const name = missingName();
  await client.call('scoreScenario', {
    label: 'a scenario that does not exist (key in the query)',
    credential: 'scoreTokenQuery',
    query: { name },
    body: { json: {} },
    expect: [404],
  });
  await client.call('scoreScenario', {
    label: 'a scenario that does not exist (Score-Token header)',
    credential: 'scoreTokenHeader',
    query: { name },
    body: { json: {} },
    expect: [404],
  });
  await client.call('scoreScenario', {
    label: 'a missing scenario name',
    credential: 'scoreTokenHeader',
    body: { json: {} },
    expect: [400],
  });
  await client.call('scoreAsync', {
    label: 'a scenario that does not exist (nothing is stored)',
    credential: 'scoreTokenHeader',
    path: { name },
    body: { json: {} },
    expect: [404],
  });
  await client.call('getAsyncScoreResult', {
    label: 'a request id that was never used',
    credential: 'scoreTokenHeader',
    path: { name },
    headers: { 'X-SCE-RequestId': `contract-${randomUUID()}` },
    expect: [404],
  });
  await client.call('submitBatch', {
    label: 'a scenario that does not exist (nothing is stored)',
    credential: 'scoreTokenQuery',
    body: { json: { scenarioName: name, parameters: [{}] } },
    expect: [404],
  });
  await client.call('getBatchStatus', {
    label: 'a batch id that does not exist',
    credential: 'scoreTokenQuery',
    path: { batchTaskId: randomUUID() },
    expect: [404],
  });
  if (client.has('getBatchResults'))
    await client.call('getBatchResults', {
      label: 'results of a batch id that does not exist',
      credential: 'scoreTokenQuery',
      path: { batchTaskId: randomUUID() },
      expect: [404],
    });
  if (client.has('listBatches'))
    await client.call('listBatches', {
      label: "the batches of the token's user (a page of at most 1)",
      credential: 'scoreTokenQuery',
      query: { limit: 1 },
      expect: [200],
    });
  if (score) {
    await client.call('scoreScenario', {
      label: `scenario ${score.scenario} (CONTRACT_SCORE_SCENARIO)`,
      credential: 'scoreTokenQuery',
      query: { name: score.scenario },
      body: { json: score.inputs },
      expect: [200],
    });
  }
}
