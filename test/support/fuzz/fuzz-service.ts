import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../../../src/http/server.js';
import { isolateJobStore } from '../../execution/support.js';
import { createTestApp, type TestApp } from '../test-app.js';
import { LoopProbe, type Hold, type LoopHold } from '../loop-probe.js';
import { arrangeFuzzFixtures } from './fuzz-fixtures.js';
import type { FuzzFixtures } from './fuzz-requests.js';
import { ServerErrorLog } from './server-error-log.js';

/**
 * The service side of a fuzz session: the real app (test/support/test-app.ts: real MariaDB and Redis, every
 * response validated against the spec) behind the service's HTTP server on 127.0.0.1, with an execution worker
 * and the fixtures' data. It measures its own event loop (LoopProbe: how late a 10 ms timer fires, and how much of
 * that the loop's thread was on a core): over the whole run, and per request from its arrival to its response,
 * keyed by the X-Request-Id it answered with.
 * The in-process session (fuzz-session.ts) and the fuzzer's child process (fuzz-service-process.ts) both run it.
 */
export type { Hold, LoopHold };

export interface FuzzService {
  testApp: TestApp;
  baseUrl: string;
  port: number;
  fixtures: FuzzFixtures;
  errorLog: ServerErrorLog;
  /** The longest event-loop hold seen while each request was answered, by X-Request-Id (the longest when ids repeat). */
  holdsByRequestId(): Map<string, Hold>;
  /** The longest holds since the fixtures were arranged (requests, jobs, timers), by wall time and by the loop's own work. */
  longestHolds(): { byWall: LoopHold[]; byBusy: LoopHold[] };
  close(): Promise<void>;
}

export async function startFuzzService(options: { echoErrors?: boolean } = {}): Promise<FuzzService> {
  isolateJobStore('fuzz');
  const errorLog = new ServerErrorLog(options.echoErrors);
  const testApp = await createTestApp({ logger: errorLog.logger });
  await testApp.services.execution.startWorker();
  const holds = new Map<string, Hold[]>();
  const inFlight = new Map<IncomingMessage, Hold>();
  /** Requests that ended since the probe's last tick: still charged with the hold that tick measures. */
  const ended = new Map<IncomingMessage, Hold>();
  const probe = new LoopProbe(() => new Map([...inFlight, ...ended]));
  probe.onTick = () => ended.clear();
  const measuring = (request: IncomingMessage, response: ServerResponse) => {
    const held: Hold = { wallMs: 0 };
    inFlight.set(request, held);
    // The fast lane passes its headers to writeHead, where getHeader does not see them: read its X-Request-Id there.
    let writtenId: string | undefined;
    const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse;
    response.writeHead = ((...args: unknown[]) => {
      const headers = args.slice(1).find((arg) => typeof arg === 'object' && arg !== null && !Array.isArray(arg)) as
        | Record<string, unknown>
        | undefined;
      for (const [name, value] of Object.entries(headers ?? {}))
        if (name.toLowerCase() === 'x-request-id') writtenId = String(value);
      return writeHead(...args);
    }) as ServerResponse['writeHead'];
    response.once('close', () => {
      inFlight.delete(request);
      ended.set(request, held);
      const id = response.getHeader('x-request-id') ?? writtenId;
      // 0 when no hold reached the request (an answer faster than 10 ms); the longest when ids repeat
      if (typeof id === 'string') holds.set(id, [...(holds.get(id) ?? []), held]);
    });
    testApp.app(request, response);
  };
  // The service's own server (src/main.ts): requests its HTTP parser refuses get the API's JSON errors too.
  const server: Server = createHttpServer(measuring, {
    maxHeaderBytes: testApp.config.limits.headerBytes,
    logger: errorLog.logger,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await testApp.close();
  };
  let fixtures: FuzzFixtures;
  try {
    fixtures = await arrangeFuzzFixtures(testApp, baseUrl);
  } catch (error) {
    await close();
    throw error;
  }
  holds.clear();
  probe.start();
  return {
    testApp,
    baseUrl,
    port,
    fixtures,
    errorLog,
    holdsByRequestId: () =>
      new Map(
        [...holds].map(([id, seen]) => [
          id,
          { wallMs: Math.max(...seen.map((h) => h.wallMs)), busyMs: Math.max(...seen.map((h) => h.busyMs ?? 0)) },
        ]),
      ),
    longestHolds: () => probe.longest(),
    async close() {
      probe.stop();
      await close();
    },
  };
}
