import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadSpec } from '../../../src/http/api-docs.js';
import { createHttpServer } from '../../../src/http/server.js';
import { isolateJobStore } from '../../execution/support.js';
import { createTestApp, type TestApp } from '../test-app.js';
import { FuzzClient, type FuzzResponse } from './fuzz-client.js';
import { arrangeFuzzFixtures } from './fuzz-fixtures.js';
import { FuzzRequestGenerator, type FuzzFixtures, type FuzzRequest } from './fuzz-requests.js';
import { ResponseChecker, type Finding } from './response-check.js';
import { ServerErrorLog } from './server-error-log.js';

/**
 * One fuzzing session: the real app (test/support/test-app.ts: real MariaDB and Redis, every
 * response validated against the spec) behind the service's HTTP server on 127.0.0.1, with an execution
 * worker, the fixtures' data, the request generator and the response checker.
 */
export interface FuzzSession {
  testApp: TestApp;
  baseUrl: string;
  fixtures: FuzzFixtures;
  generator: FuzzRequestGenerator;
  errorLog: ServerErrorLog;
  /**
   * Sends one request and checks its answer; a 5xx finding carries the logged cause. `whileSending` wraps the
   * send alone (not the client's own check of the answer), e.g. to measure the event loop while the app serves it.
   */
  run(request: FuzzRequest, whileSending?: <T>(send: () => Promise<T>) => Promise<T>): Promise<{ response: FuzzResponse; findings: Finding[] }>;
  close(): Promise<void>;
}

export async function startFuzzSession(options: { echoErrors?: boolean } = {}): Promise<FuzzSession> {
  isolateJobStore('fuzz');
  const errorLog = new ServerErrorLog(options.echoErrors);
  const testApp = await createTestApp({ logger: errorLog.logger });
  await testApp.services.execution.startWorker();
  // The service's own server (src/main.ts): requests its HTTP parser refuses get the API's JSON errors too.
  const server: Server = createHttpServer(testApp.app, { maxHeaderBytes: testApp.config.limits.headerBytes, logger: errorLog.logger });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const spec = loadSpec() as never;
  const client = new FuzzClient('127.0.0.1', port);
  const checker = new ResponseChecker(spec);
  try {
    const fixtures = await arrangeFuzzFixtures(testApp, baseUrl);
    return {
      testApp,
      baseUrl,
      fixtures,
      generator: new FuzzRequestGenerator(spec, fixtures),
      errorLog,
      async run(request, whileSending) {
        const response = await (whileSending ? whileSending(() => client.send(request)) : client.send(request));
        const findings = checker.check(request, response);
        const cause = response.status >= 500 ? errorLog.causeOf(String(response.headers['x-request-id'] ?? '')) : undefined;
        return { response, findings: cause ? findings.map((finding) => ({ ...finding, cause })) : findings };
      },
      async close() {
        client.close();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await testApp.close();
      },
    };
  } catch (error) {
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await testApp.close();
    throw error;
  }
}
