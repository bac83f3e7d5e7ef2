import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatReport } from '../../packages/contract-kit/src/report.js';
import { runContract } from '../../packages/contract-kit/src/run-contract.js';
import { outsideTheContract } from '../support/outside-the-contract.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** The contract kit (`npm run contract`) against the real service on a random port. */

async function listen(testApp: TestApp): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer(testApp.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe('the contract kit against a service that keeps the contract', () => {
  let testApp: TestApp;
  let server: Server;
  let baseUrl: string;
  let user: TestUser;

  beforeAll(async () => {
    // Responses reach the kit as the handlers wrote them: the kit, not the service, must find what is wrong.
    testApp = await createTestApp({ configOverrides: { validateResponses: false } });
    await testApp.services.execution.startWorker();
    ({ server, baseUrl } = await listen(testApp));
    user = await testApp.newUser({ prefix: 'kit' });
  });
  afterAll(async () => {
    await close(server);
    await testApp.close();
  });

  const credentials = () => ({ bearerToken: user.accessToken, scoreToken: user.scoreToken });
  const context = () => JSON.parse(user.context()) as unknown;
  const scenarioCount = async () =>
    Number(((await testApp.services.db('scenarios').count({ n: '*' }).first()) as { n: number }).n);

  it('probes every operation without credentials and expects 401', async () => {
    const { report } = await runContract({ baseUrl, credentials: {} });
    expect(report.passed).toBe(true);
    expect(report.rows.map((row) => row.statuses)).toEqual(report.rows.map(() => [401]));
  });

  it('passes every operation read-only and changes nothing', async () => {
    const before = await scenarioCount();
    const { report, written } = await runContract({ baseUrl, credentials: credentials(), context: context() });
    expect(formatReport(report)).toContain(`contract: ${report.rows.length} passed, 0 failed`);
    expect(report.passed).toBe(true);
    expect(written).toBeUndefined();
    expect(await scenarioCount()).toBe(before);
    const methods = new Set(
      report.exchanges
        .filter((exchange) => exchange.status !== 401)
        .map((exchange) => `${exchange.method} ${exchange.operationId}`),
    );
    // The only POSTs that reach a handler are refused (404) or store nothing (CSV parsing, debug, validate).
    expect([...methods].filter((entry) => !entry.startsWith('GET'))).toEqual(
      expect.arrayContaining(['POST createInputVariablesFromCsv']),
    );
    expect(
      [...methods].some((entry) =>
        /importScenarios|deployScenario|copyScenario|loadCollectionData|deleteCollection|updateScenarioTestCase/.test(
          entry,
        ),
      ),
    ).toBe(false);
  });

  it('with --write runs the tour on its own scenario and collection, and deletes the collection', async () => {
    // No CONTRACT_CONTEXT: the default `{}`, the token's user on their own scenarios.
    const { report, written } = await runContract({
      baseUrl,
      credentials: credentials(),
      write: true,
      timeoutMs: 20_000,
    });
    if (!report.passed) throw new Error(formatReport(report));
    expect(report.rows.every((row) => row.result === 'PASS')).toBe(true);
    const statuses = Object.fromEntries(report.rows.map((row) => [row.operationId, row.statuses]));
    // Every operation on its success path, its body checked: not only its 401 probe.
    expect(
      report.rows
        .filter((row) => !row.statuses.some((status) => status >= 200 && status < 300))
        .map((row) => row.operationId),
    ).toEqual([]);
    expect(statuses.importScenarios).toContain(200);
    expect(statuses.deployScenario).toContain(204);
    expect(statuses.getAsyncScoreResult).toContain(200);
    expect(statuses.getBatchStatus).toContain(200);
    expect(statuses.getBatchResults).toContain(200);
    expect(statuses.deleteCollection).toContain(204);
    // the records and replay operations on their success path, not only their 401 probes
    expect(statuses.getRecordingSettings).toContain(200);
    expect(statuses.updateRecordingSettings).toContain(200);
    expect(statuses.listDecisionRecords).toContain(200);
    expect(statuses.getDecisionRecord).toContain(200);
    expect(statuses.startReplay).toContain(202);
    expect(statuses.getReplay).toContain(200);
    expect(statuses.listReplays).toContain(200);
    expect(written?.scenarios).toEqual([`contract-${written?.runId}`, `contract-${written?.runId}-renamed`]);
    expect(written?.collectionLeft).toBeUndefined();
    expect(await testApp.services.internalData.list(user.id)).toEqual([]);
  });
});

describe('the contract kit against a service that breaks the contract', () => {
  let testApp: TestApp;
  let server: Server;
  let baseUrl: string;
  let user: TestUser;

  beforeAll(async () => {
    testApp = await createTestApp({
      configOverrides: { validateResponses: false },
      handlers: {
        // CollectionInfo[] promised; an object sent.
        listCollections: outsideTheContract(async () => ({ status: 200, body: { not: 'an array' } })),
      },
    });
    ({ server, baseUrl } = await listen(testApp));
    user = await testApp.newUser({ prefix: 'kit' });
  });
  afterAll(async () => {
    await close(server);
    await testApp.close();
  });

  it('fails the operation whose response breaks the served spec, naming what is wrong', async () => {
    const { report } = await runContract({
      baseUrl,
      credentials: { bearerToken: user.accessToken, scoreToken: user.scoreToken },
      context: JSON.parse(user.context()) as unknown,
    });
    expect(report.passed).toBe(false);
    const failed = report.rows.filter((row) => row.result === 'FAIL').map((row) => row.operationId);
    expect(failed).toEqual(['listCollections']);
    const text = formatReport(report);
    expect(text).toMatch(
      /listCollections: the collections — GET \/api\/internaldata\/collections → 200\n\s+body \(application\/json, response 200\): \(root\) must be array/,
    );
    expect(text).toContain(`contract: ${report.rows.length - 1} passed, 1 failed`);
  });

  it('fails, without stopping, when the served spec lacks an operation it tests', async () => {
    // The deployment serves a spec without getBatchStatus (as if it had been removed or renamed).
    const servedWithout: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith('/openapi.json')) return response;
      const document = (await response.json()) as { paths: Record<string, unknown> };
      delete document.paths['/api/batch/{batchTaskId}'];
      return new Response(JSON.stringify(document), { status: 200, headers: { 'Content-Type': 'application/json' } });
    };
    const { report } = await runContract({
      baseUrl,
      credentials: { scoreToken: user.scoreToken },
      fetch: servedWithout,
    });
    const row = report.rows.find((candidate) => candidate.operationId === 'getBatchStatus');
    expect(row).toMatchObject({ path: '(not in the served spec)', result: 'FAIL' });
    expect(formatReport(report)).toMatch(
      /getBatchStatus: a batch id that does not exist — \s*\n\s+the served spec has no operation getBatchStatus/,
    );
    expect(report.rows.find((candidate) => candidate.operationId === 'getAsyncScoreResult')?.result).toBe('PASS');
  });
});
