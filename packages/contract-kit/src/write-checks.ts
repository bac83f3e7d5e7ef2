import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallResult, ContractClient } from './contract-client.js';
import { propertyName, requestSchemaPointer } from './sample-values.js';
import type { JsonObject, ServedSpec } from './served-spec.js';

/**
 * `--write`: the README tour on a scenario and a collection of this run's own, named
 * `contract-<run>` and `contract_<run>`: import, open, inputs, debug, validate, save a test case, deploy,
 * versions, copy and rename, export (JSON and YAML), score synchronously (both token transports),
 * asynchronously and in a batch (status, an element's result, the results in every declared media type),
 * load a collection and read it, then delete the collection; the decision records and replays of those runs (one
 * replay read until it finished, one cancelled); a shadow and a champion/challenger split of the scenario (the
 * challenger promoted); and a model of its own (`contract-<run>`), uploaded, read, downloaded and deleted. Each
 * operation the served spec has beyond the interface is exercised only when it is served. The interface has no
 * operation that deletes a scenario, so the run's scenarios stay, under the user whose tokens ran the kit (use a
 * dedicated user for contract tests).
 */

export interface WriteOptions {
  context: unknown;
  /** How long to wait for an asynchronous run or a batch to finish. */
  timeoutMs: number;
}

/** What a write run left on the deployment. */
export interface WriteRun {
  runId: string;
  /** Scenarios created (the interface cannot delete them). */
  scenarios: string[];
  /** The collection loaded, if it could not be deleted. */
  collectionLeft?: string;
}

/** The scenario the kit imports: `a` (INTEGER) → `doubled`, with one test case. */
function scenarioDocument(spec: ServedSpec, client: ContractClient, name: string): JsonObject {
  const importSchema = requestSchemaPointer(client.operation('importScenarios'), 'application/json');
  // The test case variable's name field, as the served spec calls it (`variableName` in interface 1.9).
  const variableField = propertyName(
    spec,
    importSchema,
    ['testCases', '[]', 'variables', '[]'],
    ['variableName', 'name'],
  );
  return {
    name,
    description: 'Created by the contract test kit (scoring-contract --write); safe to ignore.',
    content: {
      nodes: [
        { id: 'start', type: 'START', name: 'Input' },
        { id: 'double', type: 'SCRIPT', name: 'Double' },
        { id: 'end', type: 'END', name: 'Result' },
      ],
      edges: [
        { from: 'start', to: 'double' },
        { from: 'double', to: 'end' },
      ],
    },
    nodeProperties: {
      start: { type: 'START', content: { inputs: [{ name: 'a', type: { type: 'INTEGER' }, required: true }] } },
      double: { type: 'SCRIPT', content: { language: 'javascript', code: 'doubled = a * 2;', outputs: ['doubled'] } },
      end: { type: 'END', content: { outputs: ['doubled'] } },
    },
    testCases: [
      {
        name: 'two doubles to four',
        variables: [{ [variableField]: 'a', value: 2 }],
        expression: { code: 'doubled === 4' },
      },
    ],
  };
}

function field(result: CallResult, ...path: Array<string | number>): unknown {
  return path.reduce<unknown>(
    (node, key) => (node && typeof node === 'object' ? (node as Record<string | number, unknown>)[key] : undefined),
    result.body,
  );
}

/** Calls `poll` until `done` says so or the time is up; answers the last result. */
async function until(
  timeoutMs: number,
  poll: () => Promise<CallResult>,
  done: (result: CallResult) => boolean,
): Promise<CallResult> {
  const deadline = Date.now() + timeoutMs;
  let result = await poll();
  while (!done(result) && result.ok && Date.now() < deadline) {
    await sleep(200);
    result = await poll();
  }
  return result;
}

export async function runWriteChecks(
  client: ContractClient,
  spec: ServedSpec,
  options: WriteOptions,
): Promise<WriteRun> {
  const run = `${new Date().toISOString().slice(0, 10).replace(/-/g, '')}-${randomUUID().slice(0, 8)}`;
  const name = `contract-${run}`;
  const collection = `contract_${run.replace(/-/g, '_')}`;
  const written: WriteRun = { runId: run, scenarios: [] };
  try {
    const scenarioId = await scenarioTour(client, spec, options, name, written);
    if (scenarioId !== null) {
      await executionTour(client, options, name);
      await recordsTour(client, options, scenarioId);
      await liveTestsTour(client, options, scenarioId);
    }
    await modelsTour(client, `contract-${run}`);
  } finally {
    await collectionTour(client, collection, written);
  }
  return written;
}

/** Management operations; answers the scenario's id when it ended deployed (execution needs it), else null. */
async function scenarioTour(
  client: ContractClient,
  spec: ServedSpec,
  options: WriteOptions,
  name: string,
  written: WriteRun,
): Promise<string | null> {
  const { context } = options;
  const imported = await client.call('importScenarios', {
    label: 'a new scenario (JSON)',
    credential: 'bearer',
    query: { context },
    body: { json: scenarioDocument(spec, client, name) },
    expect: [200],
  });
  const scenarioId = field(imported, 'scenarios', 0, 'scenarioId');
  if (scenarioId === undefined || scenarioId === null) {
    client.fail(
      'importScenarios',
      'a new scenario (JSON)',
      'the import report names no scenarioId: the scenario steps cannot go on',
    );
    return null;
  }
  written.scenarios.push(name);
  const path = { id: String(scenarioId) };
  if (client.has('listScenarios')) {
    const listed = await client.call('listScenarios', {
      label: "the caller's scenarios",
      credential: 'bearer',
      query: { context, limit: 100 },
      expect: [200],
    });
    if (listed.ok && !JSON.stringify(listed.body).includes(`"${name}"`))
      client.fail('listScenarios', "the caller's scenarios", `the first page does not list the new scenario ${name}`);
  }
  const opened = await client.call('openScenario', {
    label: 'the imported scenario',
    credential: 'bearer',
    path,
    query: { context },
    expect: [200],
  });
  await client.call('getScenarioInput', {
    label: 'its inputs',
    credential: 'bearer',
    path,
    query: { context },
    expect: [200],
  });
  await client.call('getScenarioInputVariableNames', {
    label: 'its input names',
    credential: 'bearer',
    path,
    query: { context },
    expect: [200],
  });
  await client.call('debugScenario', {
    label: 'a run with a trace',
    credential: 'bearer',
    path,
    query: { context },
    body: { json: { a: 2 } },
    expect: [200],
  });
  await client.call('debugScenario', {
    label: 'an input of the wrong type',
    credential: 'bearer',
    path,
    query: { context },
    body: { json: { a: 'two' } },
    expect: [400, 422],
  });
  await client.call('validateScenario', {
    label: 'compiles and its test case passes',
    credential: 'bearer',
    path,
    query: { context },
    expect: [204],
  });

  const testCaseId = field(opened, 'testCases', 0, 'id');
  if (testCaseId !== undefined) {
    const saveOperation = client.operation('updateScenarioTestCase');
    const variableField = propertyName(
      spec,
      requestSchemaPointer(saveOperation, 'application/json'),
      ['variables', '[]'],
      ['variableName', 'name'],
    );
    await client.call('updateScenarioTestCase', {
      label: 'its test case, renamed',
      credential: 'bearer',
      path: { id: String(scenarioId), testCaseId: String(testCaseId) },
      query: { context },
      body: {
        json: {
          name: 'two doubles to four (saved)',
          variables: [{ [variableField]: 'a', value: 2 }],
          expression: { code: 'doubled === 4' },
        },
      },
      expect: [200],
    });
  } else {
    client.fail('updateScenarioTestCase', 'its test case, renamed', 'the opened scenario lists no test case id');
  }

  const deployed = await client.call('deployScenario', {
    label: 'deploy',
    credential: 'bearer',
    path,
    query: { context },
    expect: [204],
  });
  await client.call('listScenarioVersions', {
    label: 'versions after deploying',
    credential: 'bearer',
    path,
    query: { context },
    expect: [200],
  });
  if (client.has('getScenarioStatistics'))
    await client.call('getScenarioStatistics', {
      label: 'its run statistics',
      credential: 'bearer',
      path,
      query: { context },
      expect: [200],
    });

  const copy = `${name}-copy`;
  const renamed = `${name}-renamed`;
  const copied = await client.call('copyScenario', {
    label: 'a copy',
    credential: 'bearer',
    path: { id: String(scenarioId), copiedScenarioName: copy },
    query: { context },
    expect: [200, 201],
  });
  if (copied.ok) written.scenarios.push(copy);
  const renameResult = await client.call('renameScenario', {
    label: 'the copy, renamed',
    credential: 'bearer',
    path: { currentName: copy, newName: renamed },
    query: { context },
    expect: [200],
  });
  if (renameResult.ok) written.scenarios.splice(written.scenarios.indexOf(copy), 1, renamed);
  await client.call('copyScenario', {
    label: 'a copy under a name that is taken',
    credential: 'bearer',
    path: { id: String(scenarioId), copiedScenarioName: renamed },
    query: { context },
    expect: [409],
  });
  await client.call('exportScenarios', {
    label: 'the scenario as JSON',
    credential: 'bearer',
    query: { context, name },
    expect: [200],
  });
  await client.call('exportScenarios', {
    label: 'the scenario as YAML (type=yaml)',
    credential: 'bearer',
    query: { context, name, type: 'yaml' },
    expect: [200],
    expectMediaType: 'application/yaml',
  });
  const yamlDeclared = Object.keys(client.operation('exportScenarios').responses['200']?.content ?? {}).includes(
    'application/yaml',
  );
  if (yamlDeclared)
    await client.call('exportScenarios', {
      label: 'the scenario as YAML (Accept: application/yaml)',
      credential: 'bearer',
      query: { context, name },
      headers: { Accept: 'application/yaml' },
      expect: [200],
      expectMediaType: 'application/yaml',
    });
  return deployed.ok ? String(scenarioId) : null;
}

/**
 * Decision records and replays of the scores the execution tour made: the recording settings (read, and written
 * back as they were), the records (listed until the runs' records are stored, one read by id), and a replay of
 * the deployed version against them, read until it finished, and listed.
 */
async function recordsTour(client: ContractClient, options: WriteOptions, scenarioId: string): Promise<void> {
  const { context } = options;
  const path = { id: scenarioId };
  const settings = await client.call('getRecordingSettings', {
    label: 'its recording settings',
    credential: 'bearer',
    path,
    query: { context },
    expect: [200],
  });
  if (settings.ok && settings.body && typeof settings.body === 'object') {
    await client.call('updateRecordingSettings', {
      label: 'the same settings, written back',
      credential: 'bearer',
      path,
      query: { context },
      body: { json: settings.body },
      expect: [200],
    });
  }
  const listed = await until(
    options.timeoutMs,
    () =>
      client.call('listDecisionRecords', {
        label: 'its decision records (until the runs are recorded)',
        credential: 'bearer',
        path,
        query: { context, limit: 10 },
        expect: [200],
      }),
    (result) => Array.isArray(field(result, 'records')) && (field(result, 'records') as unknown[]).length > 0,
  );
  const recordId = field(listed, 'records', 0, 'id');
  if (typeof recordId !== 'string') {
    client.fail(
      'listDecisionRecords',
      'its decision records',
      `no record of the tour's runs within ${options.timeoutMs} ms: getDecisionRecord and the replay cannot go on`,
    );
    return;
  }
  await client.call('getDecisionRecord', {
    label: 'one record, by id',
    credential: 'bearer',
    path: { id: scenarioId, recordId },
    query: { context },
    expect: [200],
  });
  const started = await client.call('startReplay', {
    label: 'a replay of the deployed version',
    credential: 'bearer',
    path,
    query: { context },
    body: { json: { candidateVersion: '1', outputs: ['doubled'], limit: 10 } },
    expect: [202],
  });
  const replayId = field(started, 'replayId');
  if (typeof replayId === 'string') {
    const finished = await until(
      options.timeoutMs,
      () =>
        client.call('getReplay', {
          label: 'the replay, until it finished',
          credential: 'bearer',
          path: { id: scenarioId, replayId },
          query: { context },
          expect: [200],
        }),
      (result) => ['FINISHED', 'FAILED'].includes(String(field(result, 'state'))),
    );
    if (field(finished, 'state') !== 'FINISHED')
      client.fail(
        'getReplay',
        'the replay, until it finished',
        `the replay is ${String(field(finished, 'state'))} after ${options.timeoutMs} ms`,
      );
  }
  if (client.has('cancelReplay')) {
    // Cancelled as soon as it is accepted: 200 while it is QUEUED or RUNNING, 409 once a worker has finished it.
    const second = await client.call('startReplay', {
      label: 'a second replay, to cancel',
      credential: 'bearer',
      path,
      query: { context },
      body: { json: { candidateVersion: '1', outputs: ['doubled'], limit: 10 } },
      expect: [202],
    });
    const secondId = field(second, 'replayId');
    if (typeof secondId === 'string')
      await client.call('cancelReplay', {
        label: 'the second replay, cancelled',
        credential: 'bearer',
        path: { id: scenarioId, replayId: secondId },
        query: { context },
        expect: [200, 409],
      });
  }
  await client.call('listReplays', {
    label: 'its replays',
    credential: 'bearer',
    path,
    query: { context },
    expect: [200],
  });
}

/**
 * Live tests of the deployed scenario: its development version as a shadow (attached, listed, read, stopped and
 * started), then as a challenger on 10 % of live traffic (listed, read, promoted: the scenario's next deployed
 * version, which ends the shadow too), and the split's end answered as it is.
 */
async function liveTestsTour(client: ContractClient, options: WriteOptions, scenarioId: string): Promise<void> {
  if (!client.has('attachShadow') || !client.has('createSplit')) return;
  const { context } = options;
  const path = { id: scenarioId };
  const attached = await client.call('attachShadow', {
    label: 'the development version as a shadow',
    credential: 'bearer',
    path,
    query: { context },
    body: { json: { version: 'develop', sampleRate: 1, outputs: ['doubled'] } },
    expect: [201],
  });
  const shadowId = field(attached, 'shadowId');
  await client.call('listShadows', {
    label: 'its shadows',
    credential: 'bearer',
    path,
    query: { context },
    expect: [200],
  });
  if (typeof shadowId === 'string') {
    const shadowPath = { id: scenarioId, shadowId };
    await client.call('getShadow', {
      label: 'the shadow and its report',
      credential: 'bearer',
      path: shadowPath,
      query: { context },
      expect: [200],
    });
    await client.call('stopShadow', {
      label: 'stopped',
      credential: 'bearer',
      path: shadowPath,
      query: { context },
      expect: [200],
    });
    await client.call('startShadow', {
      label: 'started again',
      credential: 'bearer',
      path: shadowPath,
      query: { context },
      expect: [200],
    });
  }
  const created = await client.call('createSplit', {
    label: 'the development version on 10 % of live traffic',
    credential: 'bearer',
    path,
    query: { context },
    body: { json: { challengers: [{ version: 'develop', percent: 10 }], decisionOutput: 'doubled' } },
    expect: [201],
  });
  const splitId = field(created, 'splitId');
  if (client.has('listSplits'))
    await client.call('listSplits', {
      label: 'its splits',
      credential: 'bearer',
      path,
      query: { context },
      expect: [200],
    });
  if (typeof splitId !== 'string') return;
  const splitPath = { id: scenarioId, splitId };
  await client.call('getSplit', {
    label: 'the split and its report per arm',
    credential: 'bearer',
    path: splitPath,
    query: { context },
    expect: [200],
  });
  await client.call('promoteSplit', {
    label: 'the challenger promoted (deployed as the next version)',
    credential: 'bearer',
    path: splitPath,
    query: { context },
    body: { json: { version: 'develop' } },
    expect: [200],
  });
  await client.call('endSplit', {
    label: 'the ended split, answered as it is',
    credential: 'bearer',
    path: splitPath,
    query: { context },
    expect: [200],
  });
}

/** A one-field PMML regression: what the models tour uploads. */
const CONTRACT_MODEL = `<?xml version="1.0" encoding="UTF-8"?>
<PMML xmlns="http://www.dmg.org/PMML-4_4" version="4.4">
  <Header description="Uploaded by the contract test kit (scoring-contract --write); safe to delete."/>
  <DataDictionary numberOfFields="2">
    <DataField name="a" optype="continuous" dataType="double"/>
    <DataField name="doubled" optype="continuous" dataType="double"/>
  </DataDictionary>
  <RegressionModel functionName="regression">
    <MiningSchema>
      <MiningField name="a"/>
      <MiningField name="doubled" usageType="predicted"/>
    </MiningSchema>
    <RegressionTable intercept="0"><NumericPredictor name="a" coefficient="2"/></RegressionTable>
  </RegressionModel>
</PMML>
`;

/** The model registry: a model of the run's own, uploaded, listed, read, scored on a sample, downloaded, then its version deleted. */
async function modelsTour(client: ContractClient, model: string): Promise<void> {
  if (!client.has('uploadModelVersion')) return;
  const path = { name: model };
  const uploaded = await client.call('uploadModelVersion', {
    label: 'a PMML regression, version 1',
    credential: 'bearer',
    path,
    body: {
      multipart: { field: 'file', fileName: `${model}.pmml`, contentType: 'application/xml', content: CONTRACT_MODEL },
    },
    expect: [201],
  });
  if (!uploaded.ok) return;
  await client.call('listModels', { label: 'the models', credential: 'bearer', expect: [200] });
  await client.call('getModel', { label: 'the model and its versions', credential: 'bearer', path, expect: [200] });
  const version = { name: model, version: String(field(uploaded, 'version') ?? 1) };
  await client.call('getModelVersion', {
    label: 'the version, with its fields',
    credential: 'bearer',
    path: version,
    expect: [200],
  });
  if (client.has('testModelVersion')) {
    const tried = await client.call('testModelVersion', {
      label: 'the version scored on a sample',
      credential: 'bearer',
      path: version,
      body: { json: { a: 21 } },
      expect: [200],
    });
    if (tried.ok && field(tried, 'outputs', 'doubled') !== 42)
      client.fail(
        'testModelVersion',
        'the version scored on a sample',
        `doubled is ${String(field(tried, 'outputs', 'doubled'))}, not 42`,
      );
  }
  await client.call('downloadModelVersion', {
    label: 'the file as uploaded',
    credential: 'bearer',
    path: version,
    expect: [200],
  });
  await client.call('deleteModelVersion', {
    label: 'the version, deleted',
    credential: 'bearer',
    path: version,
    expect: [204],
  });
}

async function executionTour(client: ContractClient, options: WriteOptions, name: string): Promise<void> {
  await client.call('scoreScenario', {
    label: 'a synchronous score (key in the query)',
    credential: 'scoreTokenQuery',
    query: { name },
    body: { json: { a: 21 } },
    expect: [200],
  });
  await client.call('scoreScenario', {
    label: 'a synchronous score (Score-Token header)',
    credential: 'scoreTokenHeader',
    query: { name },
    body: { json: { a: 21 } },
    expect: [200],
  });
  await client.call('scoreScenario', {
    label: 'an input of the wrong type',
    credential: 'scoreTokenQuery',
    query: { name },
    body: { json: { a: 'twenty-one' } },
    expect: [400],
  });

  const requestId = `contract-${randomUUID()}`;
  const submitted = await client.call('scoreAsync', {
    label: 'an asynchronous run',
    credential: 'scoreTokenHeader',
    path: { name },
    headers: { 'X-SCE-RequestId': requestId },
    body: { json: { a: 4 } },
    expect: [202],
  });
  if (submitted.ok) {
    await until(
      options.timeoutMs,
      () =>
        client.call('getAsyncScoreResult', {
          label: 'its result (202 until it has run)',
          credential: 'scoreTokenHeader',
          path: { name },
          headers: { 'X-SCE-RequestId': requestId },
          expect: [200, 202],
        }),
      (result) => result.status === 200,
    ).then(
      (result) =>
        result.status === 200 ||
        client.fail('getAsyncScoreResult', 'its result', `the run did not finish within ${options.timeoutMs} ms`),
    );
    await client.call('scoreAsync', {
      label: 'the same request id again',
      credential: 'scoreTokenHeader',
      path: { name },
      headers: { 'X-SCE-RequestId': requestId },
      body: { json: { a: 4 } },
      expect: [409],
    });
  }

  const batch = await client.call('submitBatch', {
    label: 'a batch of two',
    credential: 'scoreTokenQuery',
    body: { json: { scenarioName: name, parameters: [{ a: 1 }, { a: 2 }] } },
    expect: [202],
  });
  const batchTaskId = field(batch, 'batchTaskId');
  if (typeof batchTaskId !== 'string') return;
  const finished = await until(
    options.timeoutMs,
    () =>
      client.call('getBatchStatus', {
        label: 'its status until it finished',
        credential: 'scoreTokenQuery',
        path: { batchTaskId },
        expect: [200],
      }),
    (result) => Array.isArray(field(result, 'resultsIds')) && (field(result, 'resultsIds') as unknown[]).length > 0,
  );
  const resultsIds = field(finished, 'resultsIds');
  if (!Array.isArray(resultsIds) || resultsIds.length === 0) {
    client.fail(
      'getBatchStatus',
      'its status until it finished',
      `the batch did not finish within ${options.timeoutMs} ms`,
    );
    return;
  }
  await client.call('getAsyncScoreResult', {
    label: "a batch element's result",
    credential: 'scoreTokenHeader',
    path: { name },
    headers: { 'X-SCE-RequestId': String(resultsIds[0]) },
    expect: [200],
  });
  if (client.has('getBatchResults')) {
    const declared = Object.keys(client.operation('getBatchResults').responses['200']?.content ?? {});
    for (const mediaType of declared) {
      await client.call('getBatchResults', {
        label: `its results (Accept: ${mediaType})`,
        credential: 'scoreTokenQuery',
        path: { batchTaskId },
        headers: { Accept: mediaType },
        expect: [200],
        expectMediaType: mediaType,
      });
    }
  }
}

/** Loads, reads and deletes the run's collection (deleted even when a step before failed). */
async function collectionTour(client: ContractClient, collection: string, written: WriteRun): Promise<void> {
  const csv = 'customer_id,segment,credit_limit\n1,RETAIL,5000\n2,SME,20000\n';
  const upload = { multipart: { field: 'file', fileName: `${collection}.csv`, contentType: 'text/csv', content: csv } };
  const path = { collection_name: collection };
  const loaded = await client.call('loadCollectionData', {
    label: 'a CSV with a unique index',
    credential: 'bearer',
    path,
    query: { fileName: `${collection}.csv`, indexes: 'customer_id,true' },
    body: upload,
    expect: [200, 201],
  });
  if (loaded.status !== 200 && loaded.status !== 201) return;
  try {
    await client.call('listCollections', {
      label: 'the collections, with the new one',
      credential: 'bearer',
      expect: [200],
    });
    await client.call('getCollectionRows', {
      label: 'its rows, filtered',
      credential: 'bearer',
      path,
      query: { limit: 10, filter: { segment: 'SME' } },
      expect: [200],
    });
    await client.call('getCollectionColumns', { label: 'its columns', credential: 'bearer', path, expect: [200] });
    await client.call('getCollectionIndexes', { label: 'its indexes', credential: 'bearer', path, expect: [200] });
    await client.call('loadCollectionData', {
      label: 'the same keys again (unique index)',
      credential: 'bearer',
      path,
      query: { fileName: `${collection}.csv`, indexes: 'customer_id,true' },
      body: upload,
      expect: [409],
    });
  } finally {
    const deleted = await client.call('deleteCollection', {
      label: 'the collection, deleted',
      credential: 'bearer',
      path,
      expect: [204],
    });
    if (deleted.ok)
      await client.call('getCollectionRows', {
        label: 'rows after deleting',
        credential: 'bearer',
        path,
        expect: [404],
      });
    else written.collectionLeft = collection;
  }
}
