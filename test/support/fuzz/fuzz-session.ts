import { fork, type ChildProcess } from 'node:child_process';
import { loadSpec } from '../../../src/http/api-docs.js';
import { FuzzClient, type FuzzResponse } from './fuzz-client.js';
import { FuzzRequestGenerator, type FuzzFixtures, type FuzzRequest } from './fuzz-requests.js';
import { startFuzzService, type Hold, type LoopHold } from './fuzz-service.js';
import { ResponseChecker, type Finding } from './response-check.js';

/**
 * One fuzzing session: the service (fuzz-service.ts: the real app, an execution worker, the fixtures' data), the
 * request generator and the response checker. The service runs in this process (`startFuzzSession`, for the jest
 * test) or in a child process of its own (`startFuzzSessionInChild`, for `npm run fuzz`: there the event-loop holds
 * it reports are the service's alone, not the fuzzer's generation of requests).
 */
export interface FuzzSession {
  baseUrl: string;
  fixtures: FuzzFixtures;
  generator: FuzzRequestGenerator;
  /** Sends one request and checks its answer; a 5xx finding carries the cause the service logged. */
  run(request: FuzzRequest): Promise<{ response: FuzzResponse; findings: Finding[] }>;
  /** The service's event-loop holds (ms): per request by the X-Request-Id it answered with, and the longest of the run. */
  eventLoop(): Promise<EventLoopReport>;
  /** Errors the service logged outside any request (jobs). */
  backgroundErrors(): Promise<string[]>;
  close(): Promise<void>;
}

export interface EventLoopReport {
  /** The longest hold while each request was answered, by the X-Request-Id the service answered with. */
  holdsByRequestId: Map<string, Hold>;
  /** The longest holds of the whole run (by wall time and by the loop's own work), with the requests in flight. */
  longestHolds: { byWall: LoopHold[]; byBusy: LoopHold[] };
}

/** What a session asks of its service, wherever the service runs. */
interface ServiceHandle {
  baseUrl: string;
  port: number;
  fixtures: FuzzFixtures;
  causeOf(requestId: string): Promise<string | undefined>;
  eventLoop(): Promise<EventLoopReport>;
  backgroundErrors(): Promise<string[]>;
  close(): Promise<void>;
}

function sessionOver(service: ServiceHandle): FuzzSession {
  const spec = loadSpec() as never;
  const client = new FuzzClient('127.0.0.1', service.port);
  const checker = new ResponseChecker(spec);
  return {
    baseUrl: service.baseUrl,
    fixtures: service.fixtures,
    generator: new FuzzRequestGenerator(spec, service.fixtures),
    async run(request) {
      const response = await client.send(request);
      const findings = checker.check(request, response);
      const cause =
        response.status >= 500 ? await service.causeOf(String(response.headers['x-request-id'] ?? '')) : undefined;
      return { response, findings: cause ? findings.map((finding) => ({ ...finding, cause })) : findings };
    },
    eventLoop: () => service.eventLoop(),
    backgroundErrors: () => service.backgroundErrors(),
    async close() {
      client.close();
      await service.close();
    },
  };
}

/** The service in this process (the jest fuzz test). */
export async function startFuzzSession(options: { echoErrors?: boolean } = {}): Promise<FuzzSession> {
  const service = await startFuzzService(options);
  return sessionOver({
    baseUrl: service.baseUrl,
    port: service.port,
    fixtures: service.fixtures,
    causeOf: async (requestId) => service.errorLog.causeOf(requestId),
    eventLoop: async () => ({ holdsByRequestId: service.holdsByRequestId(), longestHolds: service.longestHolds() }),
    backgroundErrors: async () => service.errorLog.background,
    close: () => service.close(),
  });
}

const SERVICE_PROCESS = new URL('./fuzz-service-process.ts', import.meta.url);

/**
 * The service in a child process of its own (`npm run fuzz`), started with this process's loader flags (tsx),
 * environment (DATABASE_URL, JOBS_URL) and stderr.
 */
export async function startFuzzSessionInChild(options: { echoErrors?: boolean } = {}): Promise<FuzzSession> {
  // FUZZ_SERVICE_CPU_PROF=<dir>: the service writes a CPU profile there when it exits (to find what holds its loop).
  const profile = process.env.FUZZ_SERVICE_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.FUZZ_SERVICE_CPU_PROF}`]
    : [];
  const child: ChildProcess = fork(SERVICE_PROCESS, [], {
    execArgv: [...process.execArgv, ...profile],
    env: { ...process.env, FUZZ_ECHO_ERRORS: options.echoErrors ? '1' : '0' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let exited = false;
  const ready = new Promise<{ baseUrl: string; port: number; fixtures: FuzzFixtures }>((resolve, reject) => {
    child.on(
      'message',
      (message: {
        type?: string;
        id?: number;
        result?: unknown;
        error?: string;
        baseUrl?: string;
        port?: number;
        fixtures?: FuzzFixtures;
      }) => {
        if (message.type === 'ready') resolve(message as { baseUrl: string; port: number; fixtures: FuzzFixtures });
        else if (message.type === 'failed') reject(new Error(`the fuzz service did not start: ${message.error}`));
        else if (message.id !== undefined) {
          const waiting = pending.get(message.id);
          pending.delete(message.id);
          if (message.error !== undefined) waiting?.reject(new Error(message.error));
          else waiting?.resolve(message.result);
        }
      },
    );
    child.once('exit', (code, signal) => {
      exited = true;
      const error = new Error(`the fuzz service process exited (${signal ?? code})`);
      reject(error);
      for (const waiting of pending.values()) waiting.reject(error);
      pending.clear();
    });
  });
  const ask = <T>(type: string, extra: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) {
        reject(new Error('the fuzz service process has exited'));
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, type, ...extra });
    });
  let started: { baseUrl: string; port: number; fixtures: FuzzFixtures };
  try {
    started = await ready;
  } catch (error) {
    if (!exited) child.kill();
    throw error;
  }
  return sessionOver({
    ...started,
    causeOf: async (requestId) => (await ask<string | null>('causeOf', { requestId })) ?? undefined,
    eventLoop: async () => {
      const report = await ask<Omit<EventLoopReport, 'holdsByRequestId'> & { holdsByRequestId: Array<[string, Hold]> }>(
        'eventLoop',
      );
      return { ...report, holdsByRequestId: new Map(report.holdsByRequestId) };
    },
    backgroundErrors: () => ask<string[]>('backgroundErrors'),
    async close() {
      if (exited) return;
      await ask('close').catch(() => undefined);
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await gone;
    },
  });
}
