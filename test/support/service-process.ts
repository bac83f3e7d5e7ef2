import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { reapOnExit } from './child-reaper.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
  /** True while the process runs. */
  alive(): boolean;
}

/**
 * A service process as operators run it: `node --import tsx src/main.ts` (the API) or
 * `src/worker.ts`, not the `tsx` launcher (which runs the program in a grandchild that a kill of
 * the launcher would leave behind). Keep every started process in a list and `stopAll` it in
 * afterAll.
 */
export function startServiceProcess(
  script: 'src/main.ts' | 'src/worker.ts',
  env: Record<string, string>,
): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', APP_ENV: 'test', NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  reapOnExit(child);
  const chunks: string[] = [];
  child.stdout?.on('data', (data: Buffer) => chunks.push(data.toString('utf8')));
  child.stderr?.on('data', (data: Buffer) => chunks.push(data.toString('utf8')));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    child,
    output: () => chunks.join(''),
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

/** The exit code (or signal) of a process that ends within `timeoutMs`; rejects when it is still running then. */
export async function exitWithin(service: ServiceProcess, timeoutMs: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the process still runs after ${timeoutMs} ms:\n${service.output()}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([service.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGKILLs every process still running and waits for each to end. */
export async function stopAll(processes: ServiceProcess[]): Promise<void> {
  await Promise.all(
    processes.map(async (service) => {
      if (service.alive()) service.child.kill('SIGKILL');
      await service.exited;
    }),
  );
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
  text: string;
}

/** One HTTP request to 127.0.0.1:port, with a time-out (a hung service fails the test instead of stalling it). */
export function httpRequest(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        timeout: options.timeoutMs ?? 10_000,
        headers: {
          ...options.headers,
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            // not JSON: the test asserts on `text`
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${method} ${path} got no answer within ${options.timeoutMs ?? 10_000} ms`)),
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Waits until the API process answers /health/live (or fails with its output if it ends first). */
export async function waitUntilListening(service: ServiceProcess, port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!service.alive()) throw new Error(`the service ended before listening:\n${service.output()}`);
    const up = await httpRequest(port, 'GET', '/health/live', { timeoutMs: 1000 }).then(
      (answer) => answer.status === 200,
      () => false,
    );
    if (up) return;
    if (Date.now() > deadline)
      throw new Error(`the service did not listen on ${port} within ${timeoutMs} ms:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the process has written `text` (e.g. a log message), or fails with its output. */
export async function waitForOutput(service: ServiceProcess, text: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!service.output().includes(text)) {
    if (!service.alive()) throw new Error(`the process ended before writing "${text}":\n${service.output()}`);
    if (Date.now() > deadline)
      throw new Error(`the process did not write "${text}" within ${timeoutMs} ms:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
